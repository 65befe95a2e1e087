"""The built site: what a reader gets from one strict build of both languages.

Every page is built; each language has its own interface, language links, search index, charts and
404 page; no page fetches from another host and every link works under any site path; a notebook
page shows its snippets' outputs and offers the notebook for download.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from tests.built_site import PAGES, SITE_URL, each_page
from tests.built_site import builds, site  # noqa: F401  (the session's strict build)
from tests.pages import Source, site_path
from tools.snippets import ROOT, SNIPPETS, Snippet


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@each_page
def test_page_is_built(site, page):
    assert site_path(page, site).is_file(), f"{page.rel} was not built to {site_path(page, site)}"


@each_page
def test_language_switcher_leads_to_the_same_page(site, page):
    built = site_path(page, site)
    twin = site_path(Source(page.twin), site)
    links = dict(
        (lang, href) for href, lang in
        re.findall(r'<a href="([^"]*)" hreflang="(\w+)" class="md-select__link" target="_self"', _read(built))
    )
    other = "en" if page.is_zh else "zh"
    assert other in links, f"{page.rel}: no language switcher link to '{other}'"
    page_url = built.parent.relative_to(site).as_posix() + "/"
    target = urljoin("http://site/" + page_url, links[other])
    expected = "http://site/" + twin.parent.relative_to(site).as_posix() + "/"
    assert target.replace("/./", "/") == expected.replace("/./", "/"), (
        f"{page.rel}: the switcher leads to {target}, not to its twin {expected}"
    )


@each_page
def test_chinese_pages_have_chinese_interface(site, page):
    text = _read(site_path(page, site))
    if page.is_zh:
        assert '<html lang="zh"' in text and 'placeholder="搜索"' in text, f"{page.rel}: interface is not Chinese"
    else:
        assert '<html lang="en"' in text and 'placeholder="Search"' in text, f"{page.rel}: interface is not English"


# Anything the browser fetches by itself: scripts, styles, images, frames, fonts, module imports.
LOADS = re.compile(
    r"""<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc=["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\brel=["']?(?:stylesheet|preload|modulepreload|icon|manifest|prefetch)[^>]*\bhref=["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref=["']?(?:https?:)?//[^>]*\brel=["']?(?:stylesheet|preload|modulepreload|icon|manifest|prefetch)"""
    r"""|import\(\s*["'](?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import\s+["'](?:https?:)?//""",
    re.IGNORECASE,
)


def test_no_request_to_another_host(site):
    offenders = []
    for path in sorted(site.rglob("*")):
        if path.suffix in {".html", ".css"} and not path.name.endswith(".min.css"):
            for match in LOADS.finditer(_read(path)):
                offenders.append(f"{path.relative_to(site)}: {match.group(0)[:120]}")
    for path in sorted((site / "assets").rglob("*.css")):   # Material's own CSS too
        for match in LOADS.finditer(_read(path)):
            offenders.append(f"{path.relative_to(site)}: {match.group(0)[:120]}")
    assert not offenders, "the site would fetch from another host:\n" + "\n".join(offenders)


def test_chinese_search_finds_chinese_words(site):
    index = json.loads(_read(site / "zh" / "search" / "search_index.json"))
    separator = re.compile(index["config"]["separator"])
    assert "zh" in index["config"]["lang"], "the search plugin is not configured for Chinese"
    tokens = set()
    for doc in index["docs"]:
        tokens.update(separator.split(doc["text"] + " " + doc["title"]))
    for word in ("梯度", "钩子", "叶子", "张量"):  # jieba splits 叶子张量 into 叶子 + 张量
        assert word in tokens, f"'{word}' is not a search token of the Chinese pages (is jieba installed?)"


def test_each_language_searches_its_own_pages(site):
    """tools/site/plugin_fixes.py splits i18n's one index: /search/ English, /zh/search/ Chinese."""
    english = json.loads(_read(site / "search" / "search_index.json"))["docs"]
    chinese = json.loads(_read(site / "zh" / "search" / "search_index.json"))["docs"]
    assert english and chinese, "a language has an empty search index"
    assert not [d["location"] for d in english if d["location"].startswith("zh/")], "Chinese pages in the English index"
    han = re.compile(r"[\u4e00-\u9fff]")
    assert not [d["location"] for d in chinese if not han.search(d["title"] + d["text"])
                and not d["location"].startswith("notebooks/")], "pages without Chinese text in the Chinese index"
    config = re.search(r'"base": "([^"]*)"', _read(site / "zh" / "pitfalls" / "index.html"))
    assert config and config.group(1).endswith("/zh/"), "Chinese pages do not look for the Chinese index"


NOTEBOOK_PAGES = [p for p in PAGES if p.path.suffix == ".ipynb"]


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=[p.rel for p in NOTEBOOK_PAGES])
def test_notebook_page_shows_the_tested_outputs(site, page):
    """The built page shows each cell's saved output: exactly what its snippet asserts."""
    text = _read(site_path(page, site))
    assert "jp-Notebook" in text, f"{page.rel}: rendered as raw JSON, not as a notebook page"
    assert not re.search(r'<div class="[^"]*jp-OutputArea-output"[^>]*jupyter.stderr', text), f"{page.rel}: a cell wrote to stderr"
    # A cell's stdout may arrive in several stream blocks: compare the whole stream, in order.
    printed = "".join(
        html.unescape(block)
        for block in re.findall(r'jp-OutputArea-output" data-mime-type="text/plain"[^>]*>\s*<pre>(.*?)</pre>', text, re.DOTALL)
    )
    expected = "".join(
        Snippet.load(SNIPPETS / name).expected_output().replace("<BLANKLINE>", "")
        for name in page.includes()
    )
    assert printed == expected, f"{page.rel}: the notebook page shows other outputs than its snippets"


@pytest.mark.parametrize("rel, title", [("cost.md", "Torch memory of one training step"),
                                        ("cost.zh.md", "一步训练的 torch 内存")])
def test_cost_chart_is_labelled_in_the_page_language(site, rel, title):
    """i18n serves benchmark-memory.zh.svg as the Chinese site's assets/benchmark-memory.svg."""
    built = site_path(Source(ROOT / "docs" / rel), site)
    sources = re.findall(r'<img [^>]*src="([^"]*benchmark-memory\.svg)"', _read(built))
    assert sources, f"docs/{rel}: the cost chart is not on the page"
    chart = (built.parent / sources[0]).resolve()
    assert chart.is_file(), f"docs/{rel}: the chart {sources[0]} was not built"
    assert f"<title id=\"benchmark-title\">{title}" in _read(chart), (
        f"docs/{rel}: the chart is not the one labelled for this language"
    )


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=[p.rel for p in NOTEBOOK_PAGES])
def test_notebook_is_downloadable_from_its_page(site, page):
    built = site_path(page, site)
    links = re.findall(r'<a href="([^"]+\.ipynb)" download', _read(built))
    assert links, f"{page.rel}: no download button"
    assert (built.parent / links[0]).is_file(), f"{page.rel}: the download link {links[0]} is broken"


# Pasting an error message into the search box must find its pitfall section in both languages.
SEARCHED_ERRORS = {
    "Trying to backward through the graph a second time": "backward-twice",
    "is a view and is being modified inplace": "backward-hook-inplace-relu",
    "has been modified by an inplace operation": "inplace-saved-tensor",
    "must be Tensor, not RemovableHandle": "forward-hook-returns-handle",
}


@pytest.mark.parametrize("phrase", SEARCHED_ERRORS)
def test_error_message_finds_its_pitfall_section(site, phrase):
    """The section is in each language's index under the message (tests/test_browser.py types
    every pitfall's message into the search box of a real browser)."""
    anchor = SEARCHED_ERRORS[phrase]
    for index_path in (site / "search" / "search_index.json", site / "zh" / "search" / "search_index.json"):
        sections = {doc["location"]: doc["title"] for doc in json.loads(_read(index_path))["docs"]}
        where = f"{index_path.relative_to(site)}: pitfalls/#{anchor}"
        assert f"pitfalls/#{anchor}" in sections, f"{where} is missing"
        assert phrase in html.unescape(sections[f"pitfalls/#{anchor}"]), f"{where} does not carry {phrase!r}"


_HREF = re.compile(r'\b(?:href|src)="([^"]*)"')


def test_links_work_under_any_site_path(site):
    """Every link and resource of every page (the 404 page aside) is relative and reaches a file of
    the build: the site works at a domain root and under a path (https://host/guide/) alike."""
    problems = []
    for built in sorted(site.rglob("*.html")):
        rel = built.relative_to(site).as_posix()
        if rel.rpartition("/")[2] == "404.html":  # served at any address: links keep site_url's path
            continue
        base = "http://h/sub/" + rel
        for href in _HREF.findall(_read(built)):
            href = html.unescape(href)
            if re.match(r"^(?:[a-z][a-z0-9+.-]*:|#|//)", href, re.IGNORECASE):
                continue
            if href.startswith("/"):
                problems.append(f"{rel}: root-absolute {href}")
                continue
            path = urljoin(base, href).split("#")[0].split("?")[0]
            if not path.startswith("http://h/sub/"):
                problems.append(f"{rel}: {href} leaves the site's path")
                continue
            target = site / path[len("http://h/sub/"):]
            if not (target.is_file() or (target / "index.html").is_file()):
                problems.append(f"{rel}: {href} -> nothing at {target.relative_to(site)}")
    assert not problems, f"{len(problems)} links would break:\n" + "\n".join(problems[:30])


_NOT_FOUND_H1 = {"en": "<h1>404 - Not found</h1>", "zh": "<h1>404 - 找不到这个页面</h1>"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_language_has_its_own_not_found_page(site, lang):
    """i18n wrote every language's 404.html to the site root, the last language's winning
    (tools/site/plugin_fixes.py, 9): each language root has its own, in its language, whose language
    links lead to the language roots and whose search uses its own language's index."""
    root = "" if lang == "en" else f"{lang}/"
    page = site / root / "404.html"
    assert page.is_file(), f"no {root}404.html in the build"
    text = _read(page)
    assert f'<html lang="{lang}"' in text, f"{root}404.html: not a {lang} page"
    assert _NOT_FOUND_H1[lang] in text, f"{root}404.html: title is not {_NOT_FOUND_H1[lang]}"
    path = urlsplit(SITE_URL).path  # the 404 page is served at any address: site_url's path
    switch = dict((code, href) for href, code in re.findall(r'<a href="([^"]*)" hreflang="([^"]+)" class="md-select__link"', text))
    assert switch == {"en": path, "zh": f"{path}zh/"}, f"{root}404.html: language links {switch}"
    base = re.search(r'"base": "([^"]*)"', text)[1]
    assert base == path + root, f"{root}404.html: search looks for its index under {base}"


def test_sitemaps_list_every_page_of_their_languages(site):
    """The root sitemap lists every Markdown page of both languages, the Chinese one its own; each
    .gz holds the same text. (tools/site/parallel_languages.py joins the two passes' lists.)"""
    import gzip

    def listed(sitemap: Path) -> list[str]:
        return sorted(url.removeprefix(SITE_URL) for url in re.findall(r"<loc>([^<]+)</loc>", _read(sitemap)))

    def served(page: Source) -> str:  # 'zh/pitfalls/', '' for the home page
        folder = site_path(page, site).parent.relative_to(site).as_posix()
        return "" if folder == "." else folder + "/"

    every = sorted(served(page) for page in PAGES if page.path.suffix == ".md")  # i18n leaves notebooks out
    assert listed(site / "sitemap.xml") == every, "sitemap.xml does not list every page once"
    chinese = [path for path in every if path.startswith("zh/")]
    assert listed(site / "zh" / "sitemap.xml") == chinese, "zh/sitemap.xml does not list the Chinese pages"
    for sitemap in (site / "sitemap.xml", site / "zh" / "sitemap.xml"):
        packed = sitemap.with_name("sitemap.xml.gz")
        if packed.exists():
            assert gzip.decompress(packed.read_bytes()).decode("utf-8") == _read(sitemap), f"{packed} differs"


def test_the_forked_pass_hands_back_the_sitemap_it_wrote_not_what_is_on_disk_later(tmp_path, monkeypatch):
    """Both passes write the root sitemap at the same time: the Chinese pass hands back the bytes
    it wrote, even when the English pass has overwritten the file since (read back from disk, the
    merged sitemap once listed the English pages twice and no Chinese page)."""
    from mkdocs import utils

    from tools.site import parallel_languages

    monkeypatch.setattr(utils, "write_file", utils.write_file)  # restored after the test
    monkeypatch.setattr(utils, "get_build_timestamp", utils.get_build_timestamp)
    written, stamps = parallel_languages._recording()
    sitemap = tmp_path / "sitemap.xml"
    utils.write_file(b"<loc>zh/</loc>", str(sitemap))
    sitemap.write_bytes(b"<loc>en</loc>")  # the other pass, meanwhile
    assert written == {str(sitemap): b"<loc>zh/</loc>"}
    assert utils.get_build_timestamp() == stamps[-1]
