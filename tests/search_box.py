"""The search box of a page, as a reader uses it: each query typed in, its result links read
(tests/browser.py runs it in each browser after the page visits)."""

from __future__ import annotations

# The search worker's answers, read as they leave it. Material draws each answer as a list of up to
# ten pages (`slice(0,10)` in its bundle), which cost more than the search itself: the 565 queries
# of both languages took 162 s drawn and 68 s read from the worker, and gave the same links for every
# one (2026-11-30). So a long query (a pasted line: tools/site/search_rank.py's ranking) is typed
# into the box as a reader types it, and its answer is read from the worker and kept from Material's
# list; the links are those the list would show (Material's Fn(): each page first, then its sections,
# for the first ten pages). Short queries (digits, Chinese words) and the first CROSS_CHECK long ones
# of each page are drawn, and those long ones are read both ways: a test compares them.
_TAP_JS = """(() => {
  const Base = window.Worker;
  window.guideTap = {on: false, results: []};
  window.Worker = class extends Base {
    constructor(url, options) {
      super(url, options);
      this.addEventListener('message', event => {
        if (!window.guideTap.on || !event.data || event.data.type !== 3) return;
        window.guideTap.results.push(event.data.data);
        event.stopImmediatePropagation();  // Material's list is not drawn
        if (window.guideTap.answered) window.guideTap.answered();
      });
    }
  };
})()"""
_LINKS_JS = """(k) => {
  const base = new URL(JSON.parse(document.getElementById('__config').textContent).base, location.href);
  const href = doc => `${new URL(doc.location, base)}`;
  return window.guideTap.results[k].items.slice(0, 10).flatMap(group => {
    const rest = [...group], [page] = rest.splice(rest.findIndex(doc => !href(doc).includes('#')), 1);
    return [page, ...rest].map(href);
  });
}"""
# The other long queries, typed in one run inside the page: each set in the box with the events a
# reader's typing ends with (input, then the keyup Material searches on), its answer awaited from the
# worker before the next. Typed one by one from Playwright instead (fill's actionability checks,
# four round trips and a wait polled every frame each), both languages' searches cost 79 busy CPU-s
# and 45 s against 68 and 38 s typed here (/proc/stat, 2026-12-01); the links of all 591 queries
# were the same both ways. After a query unanswered in time the run stops (a late answer must not
# pass for the next query's): that query and the rest get [].
_TYPED_JS = """async ([queries, wait]) => {
  const links = LINKS;
  const box = document.querySelector('input.md-search__input');
  const found = [];
  window.guideTap.on = true;
  for (const query of queries) {
    const k = window.guideTap.results.length;
    const answer = new Promise(resolve => { window.guideTap.answered = resolve; });
    box.value = query;
    box.dispatchEvent(new Event('input', {bubbles: true}));
    box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true}));
    const late = new Promise(resolve => setTimeout(resolve, wait));
    await Promise.race([answer, late]);
    if (window.guideTap.results.length <= k) break;
    found.push(links(k));
  }
  window.guideTap.answered = null;
  return found;
}""".replace("LINKS", _LINKS_JS)
_DRAWN_LINKS_JS = "() => [...document.querySelectorAll('.md-search-result__list a')].map(a => a.href)"
CROSS_CHECK = 3


def _long(query: str) -> bool:
    return len(query.split()) >= 5


def search(context, base: str, path: str, queries: list[str], timeout_ms: int
           ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The result links (absolute URLs) for each query typed into the search box of one page ([]
    for a query with no result within timeout_ms), and for the cross-checked long queries the
    links Material drew."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    page.add_init_script(_TAP_JS)
    page.goto(base + path, wait_until="load")
    box = page.locator("input.md-search__input")
    box.click()
    count = "document.querySelectorAll('.md-search-result__list a').length"

    def typed(query: str, answered: str) -> bool:
        """Type the query as a reader does; False if `answered` (JS) is not true in time."""
        box.fill(query)
        box.dispatch_event("keyup")  # Material searches on keyup; fill() sends input events only
        try:
            page.wait_for_function(answered)
        except PlaywrightTimeout:
            return False
        return True

    def drawn(query: str) -> list[str]:
        page.evaluate("() => { window.guideTap.on = false }")
        if not typed("", f"() => {count} === 0"):  # a stale list must not pass for this query's
            raise RuntimeError(f"{base}{path}: the search results did not clear")
        return page.evaluate(_DRAWN_LINKS_JS) if typed(query, f"() => {count} > 0") else []

    def tapped(query: str) -> list[str]:
        k = page.evaluate("() => { window.guideTap.on = true; return window.guideTap.results.length }")
        answered = typed(query, f"() => window.guideTap.results.length > {k}")
        return page.evaluate(_LINKS_JS, k) if answered else []

    found, both, rest = {}, {}, []
    for query in queries:
        if not _long(query):
            found[query] = drawn(query)
        elif len(both) < CROSS_CHECK:  # read first: typed again unchanged, Material would not ask
            found[query] = tapped(query)
            both[query] = drawn(query)
        else:
            rest.append(query)
    if rest:
        typed_in_page = page.evaluate(_TYPED_JS, [rest, timeout_ms])
        for query, links in zip(rest, typed_in_page + [[]] * (len(rest) - len(typed_in_page))):
            found[query] = links
    page.close()
    return found, both
