"""What a built page says about itself: the torch releases its examples passed on, its last
update, (in Chinese) whether its translation is in step, the tags a shared link shows, and the
links to edit its source and to report a problem.
"""

from __future__ import annotations

import functools
import html
import json
import re
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest

from tests.built_site import PAGES, REPOSITORY, SITE_URL, each_page
from tests.built_site import builds, site  # noqa: F401  (the session's strict build)
from tests.pages import Source, site_path
from tools.snippets import DOCS, ROOT, SNIPPETS, is_snippet


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# --- Edit and report links --------------------------------------------------------------------

@each_page
def test_page_links_its_source_and_a_prefilled_report(site, page):
    """Each page links the edit view of its own source file and a new issue prefilled with the
    page's address, its language and a request for the reader's torch version."""
    from urllib.parse import parse_qs, urlsplit as split

    text = _read(site_path(page, site))
    repo = f"https://github.com/{REPOSITORY}"
    edit = f'href="{repo}/edit/main/{page.rel}"'
    assert edit in text, f"{page.rel}: no 'Edit this page' link to {repo}/edit/main/{page.rel}"
    reports = re.findall(rf'href="({re.escape(repo)}/issues/new\?[^"]+)"', text)
    assert len(reports) == 1, f"{page.rel}: expected one 'Report a problem' link, found {len(reports)}"
    query = parse_qs(split(html.unescape(reports[0])).query)
    body = query["body"][0]
    folder = site_path(page, site).parent.relative_to(site).as_posix()
    address = urljoin(SITE_URL, "" if folder == "." else folder + "/")
    assert f"Page: {address}" in body, f"{page.rel}: the report does not name {address}:\n{body}"
    assert f"Language: {'zh' if page.is_zh else 'en'}" in body, f"{page.rel}: no language in the report"
    assert "torch version" in body, f"{page.rel}: the report does not ask for the torch version"
    assert query["title"][0].strip(), f"{page.rel}: the report has no title"


# --- What a page says about itself: verified releases, last update, translation, shared links ---

def _page_url(page: Source, site: Path) -> str:
    folder = site_path(page, site).parent.relative_to(site).as_posix()
    return urljoin(SITE_URL, "" if folder == "." else folder + "/")


class _Head(HTMLParser):
    """The head's meta tags as a parser reads them: a quote left unescaped ends the attribute."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[dict[str, str]] = []
        self.feed(text.partition("</head>")[0])

    def handle_starttag(self, tag, attrs):
        if tag == "meta":
            self.tags.append({k: v or "" for k, v in attrs})


def _meta(text: str, key: str) -> list[str]:
    return [t.get("content", "") for t in _Head(text).tags if key in (t.get("property"), t.get("name"))]


_FRONT_MATTER = re.compile(r"\A---\n(?P<yaml>.*?\n)---\n", re.DOTALL)


def _front_description(page: Source) -> str | None:
    import yaml

    match = _FRONT_MATTER.match(page.path.read_text(encoding="utf-8")) if page.path.suffix == ".md" else None
    value = yaml.safe_load(match["yaml"]).get("description") if match else None
    return " ".join(value.split()) if value else None


@each_page
def test_page_has_the_tags_a_shared_link_shows(site, page):
    text = _read(site_path(page, site))
    for key in ("og:title", "og:description", "og:url", "og:image", "twitter:card"):
        assert len(_meta(text, key)) == 1 and _meta(text, key)[0].strip(), f"{page.rel}: no single {key} tag"
    assert _meta(text, "og:url") == [_page_url(page, site)], f"{page.rel}: og:url {_meta(text, 'og:url')}"
    image = _meta(text, "og:image")[0]
    assert image == urljoin(SITE_URL, "assets/social-card.png"), f"{page.rel}: og:image {image}"
    card = site / "assets" / "social-card.png"
    assert card.read_bytes()[16:24] == (1200).to_bytes(4, "big") + (630).to_bytes(4, "big"), (
        "docs/assets/social-card.png is not 1200 x 630: run `make social-card`")
    assert _meta(text, "og:locale") == ["zh_CN" if page.is_zh else "en_US"], f"{page.rel}: og:locale"
    assert _meta(text, "twitter:card") == ["summary_large_image"]
    expected = _front_description(page)
    if expected:  # the page's own words, whole, in each description tag
        for key in ("description", "og:description", "twitter:description"):
            assert _meta(text, key) == [expected], f"{page.rel}: {key} is {_meta(text, key)}, not {expected!r}"


def _verified_by_page() -> dict:
    """Recomputed from the matrix results, not read from verified.json: the test of the badge."""
    from tools.examples import compat

    return compat.verified(json.loads(compat.DATA.read_text(encoding="utf-8")))


VERIFIED = _verified_by_page()
STATUS = re.compile(r'<p class="guide-status">(.*?)</p>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@each_page
def test_page_says_which_torch_releases_its_examples_passed_on(site, page):
    text = _read(site_path(page, site))
    english = page.path.relative_to(DOCS).as_posix().replace(".zh.", ".")
    entry = VERIFIED.get(english)
    status = STATUS.findall(text)
    if entry is None:
        includes = ([i for i in page.includes() if i.endswith((".md", ".py")) and is_snippet(SNIPPETS / i)]
                    if page.path.suffix == ".md" else [])
        assert not includes, (f"{page.rel} includes examples that verified.json does not know yet: run "
                              "`python -m tools.examples.compat --stored` (make outputs runs it)")
        assert not any("torch" in s for s in status), f"{page.rel} has no examples but says: {status}"
        return
    if entry.get("pending"):
        said = html.unescape(_TAG.sub("", " ".join(status)))
        words = "Verified on torch" if not page.is_zh else "已在 torch"
        assert f"{words} {entry['pinned']}" in said and f" {len(entry['pending'])} " in said, (
            f"{page.rel}: examples {entry['pending']} are pending the matrix, and the page says {said!r}")
        assert not re.search(r"\d+\.\d+\.\d+[–-]\d", said), f"{page.rel} claims a range while examples are pending: {said!r}"
        if "guide" not in entry:
            marked = re.findall(r'<span class="filename">([\w.-]+?)(?:\.py)? <span class="guide-pending"', text)
            assert sorted(set(marked)) == sorted(entry["pending"]), f"{page.rel}: pending marks on {marked}"
        return
    if not entry["count"]:
        assert not any("torch" in s for s in status), f"{page.rel}: no release passed, but the page says: {status}"
        return
    assert len(status) == 1, f"{page.rel}: expected one status line under the title, found {len(status)}"
    said = html.unescape(_TAG.sub("", status[0]))
    sep = "、" if page.is_zh else ", "
    facts = [f"torch {entry['releases'].replace(', ', sep)}", entry["date"], f" {entry['tested']} "]
    facts += [f"torch {entry[key].replace(', ', sep)}" for key in ("differs", "fails") if entry[key] and "guide" not in entry]
    facts += [f" {entry['count']} "] if "guide" not in entry else [f" {entry['guide']} "]
    missing = [fact for fact in facts if fact not in said]
    assert not missing, f"{page.rel} says {said!r}; the matrix results also say {missing}: run `python -m tools.examples.compat`"
    assert re.search(r'</h1>\s*<p class="guide-status">', text), f"{page.rel}: the status line is not under the title"
    for name, releases in entry["examples"].items():
        bar = re.search(rf'<span class="filename">{re.escape(name)}(?:\.py)? <span class="guide-range"[^>]*>torch ([^<]+)</span>', text)
        releases = releases.replace(", ", sep)
        assert bar and bar[1] == releases, f"{page.rel}: example {name} should show torch {releases}"
    shown = re.findall(r'class="guide-range"', text)
    assert len(shown) >= len(entry["examples"]), f"{page.rel}: {len(shown)} ranges shown, {len(entry['examples'])} expected"


@functools.lru_cache(maxsize=1)
def _git_dates() -> dict[str, str]:
    """path -> date of the newest commit that changed it (one git log for every file)."""
    log = subprocess.run(["git", "log", "--format=%x00%cs", "--name-only", "--", "docs", "snippets"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    dates: dict[str, str] = {}
    for entry in log.split("\0")[1:]:
        date, *names = entry.strip().split("\n")
        for name in filter(None, names):
            dates.setdefault(name, date)
    return dates


def _git_date(rel: str) -> str:
    return _git_dates().get(rel, "")


@each_page
def test_page_shows_its_last_update_from_git(site, page):
    """The newest commit among the page's source and the snippets it includes; none in a shallow
    clone, whose history would date every page at its one commit."""
    text = _read(site_path(page, site))
    shown = re.findall(r'<span class="guide-last-update">([^<]+)<', text)
    if _SHALLOW:
        assert shown == [], f"{page.rel}: a shallow clone cannot date the page, yet it shows {shown}"
        return
    today = time.strftime("%Y-%m-%d", time.gmtime())  # a source not committed yet: the build's date
    sources = [page.rel] + [f"snippets/{name}" for name in page.includes()] if page.path.suffix == ".md" else [page.rel]
    sources += [s[:-3] + ".out" for s in sources if s.startswith("snippets/") and s.endswith(".py")]
    expected = max(_git_date(source) or today for source in sources)
    assert shown == [expected], f"{page.rel}: last update {shown}, git says {expected} (of {sources})"


_SHALLOW = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip() != "false"


ZH_PAGES = [p for p in PAGES if p.is_zh]


@pytest.mark.parametrize("page", ZH_PAGES, ids=[p.rel for p in ZH_PAGES])
def test_chinese_page_says_whether_its_translation_is_in_step(site, page):
    if _SHALLOW:
        assert "译文" not in " ".join(STATUS.findall(_read(site_path(page, site)))), f"{page.rel}: shallow clone"
        return
    pair = _translation_pairs()[page.rel]
    status = " ".join(STATUS.findall(_read(site_path(page, site))))
    if pair.since:
        assert f"英文原文在本译文之后有 {len(pair.since)} 次修改" in status, f"{page.rel}: {status!r}"
    elif not pair.translated_at:
        assert "译文尚未提交" in status, f"{page.rel}: {status!r}"
    elif pair.uncommitted:
        assert "英文原文有尚未提交的修改" in status, f"{page.rel}: {status!r}"
    else:
        assert "译文与英文原文同步" in status, f"{page.rel}: {status!r}"


@functools.lru_cache(maxsize=1)
def _translation_pairs() -> dict:
    from tools.site.translation_status import pairs

    return {pair.chinese: pair for pair in pairs(ROOT)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_page_with_a_pending_example_vouches_for_the_pinned_release_only(monkeypatch, lang):
    """What a contributor's new example looks like on its page before the matrix has run it."""
    from types import SimpleNamespace

    from tools.examples import compat
    from tools.site import page_status

    page_file = "techniques/register-hook.md"
    name = sorted(n for n in compat.snippet_names() if page_file in compat.pages_including(n))[0]
    from tests.test_compat import _changed

    stored = json.loads(compat.DATA.read_text(encoding="utf-8"))
    data = _changed(stored, name, stored["versions"][1:])  # the releases with results
    entry = compat.verified(data)[page_file]
    monkeypatch.setattr(page_status, "_verified", lambda: {page_file: entry})
    url = ("zh/" if lang == "zh" else "") + "techniques/register-hook/"
    source = DOCS / (page_file if lang == "en" else page_file.replace(".md", ".zh.md"))
    page = SimpleNamespace(url=url, meta={}, file=SimpleNamespace(
        src_uri=source.relative_to(DOCS).as_posix(), locale=lang, abs_src_path=str(source)))
    content = page_status.on_page_content(f'<h1>T</h1><span class="filename">{name}</span>', page, None, None)
    said = html.unescape(_TAG.sub("", STATUS.search(content)[1]))
    pinned = data["versions"][0]
    assert said.startswith(("Verified on torch " if lang == "en" else "已在 torch ") + pinned), said
    assert ("pending" in said) if lang == "en" else ("版本矩阵" in said), said
    assert not re.search(r"\d+\.\d+\.\d+[–-]\d", said), f"a range is claimed: {said}"
    assert re.search(rf'<span class="filename">{name} <span class="guide-pending"', content), content
