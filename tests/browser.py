"""A reader's browser on the built site: Debian's Chromium, driven by Playwright, on 127.0.0.1.

`browse(site, pages, searches, port)` serves the built site on 127.0.0.1 (on the port it was built
for), opens every page once in Chromium (two, side by side) and records what a reader would meet
there (tests/test_browser.py asserts on the records):

- every request the page made and every response of 400 or more, console errors, page errors;
- for every code block with a copy button: its language, its title, the text the button gave the
  clipboard (read back from the clipboard itself for the first and last button of each page), and
  the output the page shows for it;
- the colour scheme before and after a click on the light/dark toggle (on a few pages: TOGGLE_PAGES);
- where a click on the other language in the language switcher leads, both ways, and the page's
  interface strings;
- on notebook pages, the downloaded notebook and the Colab link.

It then types each search into the search box of a page and records the result links (a long
query's links read from the search worker's answer: tests/search_box.py).
Chromium is started with the flags that keep it from calling home (there is no network here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tests.search_box import search
from tools.dev.serve import CHROMIUM_FLAGS, Server, headless_chromium_path

TIMEOUT_MS = 15_000


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (make install)"
    if headless_chromium_path() is None:
        return ("neither Debian's chromium-headless-shell nor its chromium is installed (make system-packages, "
                "or apt-get install chromium-headless-shell)")
    return None


@dataclass
class Block:
    """One code block with a copy button, as the page shows it."""

    language: str           # "pycon", "python", "text", "bash", ...
    title: str              # the block's title bar, "" if none
    shown_code: str         # the code lines the page shows (pycon: without prompts and output)
    shown_output: str       # pycon: the output lines; python: the output block after it
    copied: str = ""        # what the copy button gave the clipboard (its copy event carried)
    on_clipboard: str | None = None  # the clipboard read back after the click (first, last button; cells)


@dataclass
class Visit:
    url: str
    lang: str = ""                                      # <html lang>
    strings: dict = field(default_factory=dict)         # interface strings: search box, copy, toc
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)     # "404 http://..." and network failures
    console: list[str] = field(default_factory=list)    # console errors and uncaught exceptions
    blocks: list[Block] = field(default_factory=list)
    schemes: tuple[str, str] = ("", "")                 # colour scheme before, after the toggle (TOGGLE_PAGES)
    switched_to: str = ""                               # URL after choosing the other language
    notebook: str = ""                                  # the download button's file, as downloaded
    notebook_url: str = ""
    colab_url: str = ""                                 # the "Open in Colab" link


# Collected in the page: the blocks with a copy button, in the order of their buttons.
# The copy buttons a reader sees: Material's on code blocks, and the clipboard-copy elements
# mkdocs-jupyter puts on notebook cells ("cell": code that runs as it is, output under the cell).
_BUTTONS = 'button[data-md-type="copy"], clipboard-copy[for]'

# Collected in the page: the blocks with a copy button, in the order of their buttons.
_BLOCKS_JS = """() => [...document.querySelectorAll('BUTTONS')].map(button => {
  if (button.matches('clipboard-copy')) {
    const cell = button.closest('.jp-Cell');
    return {
      language: 'cell', title: button.getAttribute('for'),
      shown_code: document.getElementById(button.getAttribute('for')).textContent,
      shown_output: [...cell.querySelectorAll('.jp-OutputArea-output pre')].map(pre => pre.textContent).join(''),
    };
  }
  const pre = button.closest('pre');
  const box = pre.closest('.highlight') || pre.parentElement;
  const language = ([...box.classList].find(c => c.startsWith('language-')) || '').slice(9);
  const title = (box.querySelector('.filename') || {textContent: ''}).textContent.trim();
  const lines = [...pre.querySelectorAll('code > span')];
  const isOutput = line => line.querySelector(':scope > .go, :scope > .gt, :scope > .gr') !== null;
  const strip = line => {
    const copy = line.cloneNode(true);
    copy.querySelectorAll('.gp').forEach(prompt => prompt.remove());
    return copy.textContent;
  };
  let output = '';
  if (language === 'pycon') {
    output = lines.filter(isOutput).map(line => line.textContent).join('');
  } else if (language === 'python') {
    const next = box.nextElementSibling;
    if (next && next.classList.contains('language-text')) output = next.querySelector('code').textContent;
  }
  return {
    language, title,
    shown_code: lines.filter(line => !isOutput(line)).map(strip).join(''),
    shown_output: output,
  };
})""".replace("BUTTONS", _BUTTONS)


_STRINGS_JS = """() => ({
  search: (document.querySelector('input.md-search__input') || {}).placeholder || '',
  copy: (document.querySelector('button[data-md-type="copy"]') || {title: ''}).title
    || ((document.querySelector('clipboard-copy') || {getAttribute: () => ''}).getAttribute('aria-label') || ''),
  toc: (document.querySelector('.md-nav--secondary > label') || {textContent: ''}).textContent.trim(),
})"""

# Each copy button clicked in turn, from `start`, and what it gave the clipboard. Material's buttons
# copy with document.execCommand('copy') on a hidden textarea holding the code; the copy event that
# carries that selection to the clipboard is read by a listener on window (bubbling: after the
# page's own handlers, so one that replaced the text is seen), inside the click itself: nothing to
# wait for, and `caught` is cleared before each click, so an earlier copy cannot pass for it.
# Reading the real clipboard back costs about 22 ms a read in headless Chromium, two reads a copy
# (on all 1,948 copies: a third of the page visits' Chromium CPU time), so it is read back for the first and the
# last button of each page, where test_browser.py checks it equals what the copy event carried,
# and for the notebooks' cells (their clipboard-copy elements write with navigator.clipboard,
# without a copy event). Before such a click the clipboard gets a marker, and the click waits
# until the marker can be read back: the clearing write is asynchronous, and on a busy 2-core
# machine it landed after the button's copy now and then. After the click, the clipboard is read
# until it holds something other than the marker, for up to COPY_WAIT_MS; a button that copies
# nothing reads back ''.
# Material's buttons copy only while the page has transient user activation (a reader's click
# gives it, for a few seconds; a script's click does not): where `navigator.userActivation.isActive`
# says it has lapsed, or a script's click copied nothing, the loop stops and returns that button's
# index, for a reader's click (_copy_all); the loop then resumes, clicking from the script while
# the activation lasts.
COPY_WAIT_MS = 3_000  # a copy lands within milliseconds once the marker is read back
_COPY_JS = """async (start) => {
  const buttons = [...document.querySelectorAll('BUTTONS')];
  if (!window.guideCopy) {
    const settle = async (done) => {
      const until = performance.now() + WAIT;
      let text = await navigator.clipboard.readText();
      while (!done(text) && performance.now() < until) {
        await new Promise(resolve => setTimeout(resolve, 10));
        text = await navigator.clipboard.readText();
      }
      return text;
    };
    const checked = i => buttons[i].matches('clipboard-copy') || i === 0 || i === buttons.length - 1;
    const marker = i => `guide-copy-test-marker-${i}`;
    const copy = {caught: null};
    window.addEventListener('copy', event => {
      const target = event.target;
      copy.caught = event.defaultPrevented ? event.clipboardData.getData('text/plain')
        : target && typeof target.value === 'string' ? target.value.slice(target.selectionStart, target.selectionEnd)
        : String(document.getSelection());
    });
    copy.before = async (i) => {
      copy.caught = null;
      if (!checked(i)) return;
      await navigator.clipboard.writeText(marker(i));
      await settle(text => text === marker(i));
    };
    // {text: what the copy gave, clipboard: the clipboard read back (null: not read)}, or null
    // where a Material button copied nothing (a reader's click next)
    copy.after = async (i) => {
      let clipboard = null;
      if (checked(i)) {
        clipboard = await settle(text => text !== marker(i));
        if (clipboard === marker(i)) clipboard = '';
      }
      if (buttons[i].matches('clipboard-copy')) return {text: clipboard, clipboard};
      return copy.caught ? {text: copy.caught, clipboard} : null;
    };
    window.guideCopy = copy;
    // a reader opens a collapsed block (the compatibility page's "??? note") before copying from
    // it; a button inside a closed <details> copies nothing
    document.querySelectorAll('details:not([open])').forEach(details => { details.open = true; });
  }
  const copied = [];
  for (let i = start; i < buttons.length; i++) {
    await window.guideCopy.before(i);
    if (buttons[i].matches('button') && !navigator.userActivation.isActive) return {copied, next: i};
    buttons[i].click();
    const got = await window.guideCopy.after(i);
    if (got === null) return {copied, next: i};
    copied.push(got);
  }
  return {copied, next: null};
}""".replace("BUTTONS", _BUTTONS).replace("WAIT", str(COPY_WAIT_MS))


def _copy_all(page) -> list[dict]:
    """What each copy button gave, in button order: {"text": ..., "clipboard": ... or None}."""
    copied, start = [], 0
    while True:
        result = page.evaluate(_COPY_JS, start)
        copied += result["copied"]
        if result["next"] is None:
            return copied
        index = result["next"]  # a reader's click: it also gives the page user activation again
        page.evaluate("i => window.guideCopy.before(i)", index)
        page.locator(_BUTTONS).nth(index).click()
        copied.append(page.evaluate("i => window.guideCopy.after(i)", index) or {"text": "", "clipboard": None})
        start = index + 1


# The toggle a reader sees: the label of the palette form that is displayed.
_TOGGLE_JS = """() => [...document.querySelectorAll('form[data-md-component=palette] label')]
  .find(label => label.offsetParent !== null).click()"""


# The colour toggle is the header's palette form, the same partial of Material's template on every
# page: it is clicked on these pages only (English paths; their Chinese twins too): the home page,
# a notebook page (mkdocs-jupyter's template around it) and the longest page. The click restyles
# the whole page: 0.1-0.23 CPU-s of Chromium per page (measured page by page, 2026-11-30); in a
# full run the saving is inside the run-to-run spread (Chromium 144-150 CPU-s). A script error on
# any page, which could stop the toggle, fails that page's console test.
TOGGLE_PAGES = ("", "notebooks/intermediate-gradients/", "questions/")


def _record(page, visit: Visit, toggle: bool) -> None:
    """What a reader meets on the page now loaded: code blocks and copies, the colour toggle."""
    visit.lang = page.evaluate("document.documentElement.lang")
    if page.locator("pre > code").count():
        page.locator('button[data-md-type="copy"]').first.wait_for(state="attached")  # added after load
    page.wait_for_function("() => customElements.get('clipboard-copy') !== undefined"
                           " || !document.querySelector('clipboard-copy')")
    visit.blocks = [Block(**block) for block in page.evaluate(_BLOCKS_JS)]
    for block, copied in zip(visit.blocks, _copy_all(page)):
        block.copied, block.on_clipboard = copied["text"], copied["clipboard"]
    visit.strings = page.evaluate(_STRINGS_JS)
    download = page.locator("a.md-content__button[download]")
    if download.count():
        with page.expect_download() as started:
            download.click()
        visit.notebook_url = started.value.url
        visit.notebook = Path(started.value.path()).read_text(encoding="utf-8")
    colab = page.locator("a.guide-colab")
    visit.colab_url = colab.get_attribute("href") if colab.count() else ""
    if not toggle:
        return
    scheme = "() => document.body.getAttribute('data-md-color-scheme')"
    before = page.evaluate(scheme)
    page.evaluate(_TOGGLE_JS)
    page.wait_for_function(f"() => document.body.getAttribute('data-md-color-scheme') !== {before!r}")
    visit.schemes = (before, page.evaluate(scheme))


def _switch_language(page, lang: str) -> None:
    """Open the language switcher and choose `lang`, as a reader does."""
    page.locator(".md-header__option .md-select").first.hover()
    with page.expect_navigation(wait_until="load"):
        page.locator(f"a.md-select__link[hreflang={lang}]").click()


def _failed(visit: Visit, request) -> None:
    """A request that got no response. Those cut short because the test moved on to the next
    page (net::ERR_ABORTED: the search worker may still be loading its scripts) are not the
    site's fault; a refused or unresolvable address is."""
    if "ERR_ABORTED" not in (request.failure or ""):
        visit.failed.append(f"failed ({request.failure}) {request.url}")


def _visit_pair(context, base: str, path: str) -> tuple[Visit, Visit]:
    """An English page, then its Chinese twin reached through the switcher, then back.

    The Chinese page is recorded as it loads from the click; the way back is checked by the URL
    it leads to (served as an empty page: the English page was already recorded).
    """
    english = Visit(url=base + path)
    current = [english]
    page = context.new_page()
    page.on("request", lambda request: current[0].requests.append(request.url))
    page.on("requestfailed", lambda request: _failed(current[0], request))
    page.on("response", lambda r: r.status >= 400 and current[0].failed.append(f"{r.status} {r.url}"))
    page.on("console", lambda message: message.type == "error" and current[0].console.append(message.text))
    page.on("pageerror", lambda error: current[0].console.append(f"uncaught: {error}"))
    page.goto(english.url, wait_until="load")
    _record(page, english, path in TOGGLE_PAGES)

    chinese = Visit(url="")
    current[0] = chinese
    _switch_language(page, "zh")
    english.switched_to = chinese.url = page.url
    _record(page, chinese, path in TOGGLE_PAGES)

    current[0] = Visit(url="")  # the way back: only where it leads
    page.route("**/*", lambda route: route.fulfill(body="<html lang=en></html>", content_type="text/html")
               if route.request.is_navigation_request() else route.continue_())
    _switch_language(page, "en")
    chinese.switched_to = page.url
    page.close()
    return english, chinese


WORKERS = 2  # Chromiums side by side, each with its own clipboard

# After a copy Material focuses the button (`t.trigger.focus()` in its bundle). A reader's button is
# on screen, so that focus does not move the page; the buttons clicked from _COPY_JS are mostly
# off screen, and the focus scrolled the page to each of them in turn: a scroll, a repaint and
# Material's scroll handlers (the table of contents follows) per copy, none of them a reader's.
# focus() is given preventScroll: the button still takes the focus, the page stays where it is.
# Every page of both languages visited alone, the machine's busy CPU-s (/proc/stat), two runs each:
# 109-113 -> 90-98 (with the searches: 174-186 -> 154-163).
_FOCUS_IN_PLACE_JS = """(() => {
  const focus = HTMLElement.prototype.focus;
  HTMLElement.prototype.focus = function (options) { return focus.call(this, {...options, preventScroll: true}); };
})()"""


def _worker(url: str, paths: list[str], searches: dict[str, list[str]], visits: dict, found: dict, drawn: dict,
            on_blocks) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:  # one per thread: the sync API is not thread-safe
        browser = playwright.chromium.launch(executable_path=headless_chromium_path(), args=CHROMIUM_FLAGS)
        # a reader who asked for reduced motion: Material's transitions (the "Copied to clipboard"
        # toast on every copy) are left out; what the buttons copy is the same. 6 pages: 41-42 s ->
        # 37-38 s of browsing.
        context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
        context.set_default_timeout(TIMEOUT_MS)
        context.add_init_script(_FOCUS_IN_PLACE_JS)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
        for path in paths:  # English paths; each visit covers the Chinese twin too
            english, chinese = _visit_pair(context, url, path)
            visits[path], visits["zh/" + path] = english, chinese
            if on_blocks is not None:
                on_blocks(english.blocks + chinese.blocks)
        for path, queries in searches.items():
            found[path], drawn[path] = search(context, url, path, queries, TIMEOUT_MS)
        browser.close()


def browse(site: Path, paths: list[str], searches: dict[str, list[str]], port: int = 0, on_blocks=None):
    """Visit each English page path (relative to the site root) and its Chinese twin at zh/<path>,
    then type each query into the search box of its page ({page path: [queries]}).
    on_blocks(blocks) is called with each pair's code blocks as soon as they are recorded, from
    the workers' threads."""
    from concurrent.futures import ThreadPoolExecutor

    server = Server(site, port)
    visits: dict = {}
    found: dict = {}
    drawn: dict = {}
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            shares = [paths[i::WORKERS] for i in range(WORKERS)]
            # each language's searches in a browser of its own: one browser typing all of them
            # (437 queries into a search index that grew with the Questions page) was the job's tail
            kinds = list(searches.items())
            asked = [dict(kinds[i::WORKERS]) for i in range(WORKERS)]
            jobs = [
                pool.submit(_worker, server.url, share, asked[i], visits, found, drawn, on_blocks)
                for i, share in enumerate(shares)
            ]
            for job in jobs:
                job.result()
    finally:
        server.close()
    return server.url, visits, found, drawn


def same_origin(url: str, base: str) -> bool:
    return urlsplit(url).netloc == urlsplit(base).netloc or url.startswith(("data:", "blob:"))
