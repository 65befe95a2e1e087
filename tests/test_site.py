"""The built site: one strict build of both languages, then checks on what a reader gets.

The mutation tests at the end copy the sources, break a page three ways in one build, and prove
that the strict build fails naming each file, and for no other reason.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from tests.pages import Source, pages, site_path
from tools.dev.serve import free_port
from tools.snippets import DOCS, ROOT, SNIPPETS, Snippet

PAGES = pages()
BUILD_TIMES: dict[str, float] = {}   # reported by conftest.py, never asserted


def mkdocs_build(project: Path, site: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    environment.pop("GUIDE_ALLOW_FALLBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project, env=environment, capture_output=True, text=True, timeout=300,
    )


def _timed(name: str, project: Path, site: Path, **env: str) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = mkdocs_build(project, site, **env)
    BUILD_TIMES[name] = time.perf_counter() - started
    return result


_STARTED: dict = {}


# The site is built for the address the browser tests serve it at: absolute URLs (canonical,
# hreflang, the sitemaps Material fetches) then point at the local server.
SITE_URL = f"http://127.0.0.1:{free_port()}/"
# GitHub Actions names the repository; elsewhere a stand-in, for the notebooks' Colab links.
REPOSITORY = os.environ.get("GITHUB_REPOSITORY") or "example/intermediate-gradients"


_NOTEBOOK_PLUGIN = re.compile(r"^  - mkdocs-jupyter:\n(?:      .*\n)+", re.MULTILINE)


def start_builds(workdir: Path) -> None:
    """Start every build of the session in the background (conftest.py calls this right after
    collection), so that they run while the snippet examples run: both cores stay busy."""
    if _STARTED:
        return
    project = workdir / "broken" / "guide"
    for folder in ("docs", "snippets", "tools"):
        shutil.copytree(ROOT / folder, project / folder)
    # The breakages are in Markdown pages: the notebook plugin (2.5 of its 7.5 s) is left out.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    (project / "mkdocs.yml").write_text(_NOTEBOOK_PLUGIN.sub("", config, count=1), encoding="utf-8")
    for _, mutate in MUTATIONS.values():
        mutate(project)
    jobs = {
        "site": ("strict build, both languages", ROOT, workdir / "site",
                 {"SITE_URL": SITE_URL, "GITHUB_REPOSITORY": REPOSITORY}),
        "broken": ("mutated build (three breakages)", project, project.parent / "site", {}),
    }
    pool = ThreadPoolExecutor(max_workers=len(jobs))
    for name, (label, source, site, env) in jobs.items():
        _STARTED[name] = (site, pool.submit(_timed, label, source, site, **env))
    pool.shutdown(wait=False)


@pytest.fixture(scope="session")
def builds(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    start_builds(tmp_path_factory.mktemp("builds"))  # no-op when conftest.py already started them
    return {name: (site, future.result()) for name, (site, future) in _STARTED.items()}


@pytest.fixture(scope="session")
def site(builds) -> Path:
    target, result = builds["site"]
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return target


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


each_page = pytest.mark.parametrize("page", PAGES, ids=[p.rel for p in PAGES])


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


# --- The strict build must fail, naming the file, when the guide is broken ---------------------
# Warnings are all reported before strict mode aborts, so those breakages share one build. A
# missing snippet is an error raised by pymdownx.snippets itself: test_missing_snippet_fails_the_build
# renders one through the project's own configuration, which costs milliseconds instead of a build.

def _append(project: Path, page: str, text: str) -> None:
    path = project / "docs" / page
    path.write_text(_read(path) + text, encoding="utf-8")


# id: (what the log must name, breakage)
MUTATIONS = {
    "missing-chinese-page": (
        "register-hook.md",
        lambda project: (project / "docs/techniques/register-hook.zh.md").unlink(),
    ),
    "broken-anchor": (
        "index.zh.md",
        lambda project: _append(project, "index.zh.md", "\n[失效](techniques/retain-grad.md#no-such-section)\n"),
    ),
    "broken-link": (
        "glossary.md",
        lambda project: _append(project, "glossary.md", "\n[gone](techniques/no-such-page.md)\n"),
    ),
}
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_strict_build_fails_naming_the_file(builds, mutation):
    named, _ = MUTATIONS[mutation]
    _, result = builds["broken"]
    log = result.stdout + result.stderr
    lines = log.splitlines()
    flagged = [line for line in lines if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode != 0, f"the strict build passed although {named} is broken:\n{log}"
    assert any(named in line for line in flagged), f"no warning or error names {named}:\n{log}"
    # It failed because of the breakages, not for another reason (a crash, an unrelated warning).
    caused = [n for n, _ in MUTATIONS.values()]
    unrelated = [line for line in flagged if not any(n in line for n in caused)]
    if "Traceback (most recent call last)" in log:
        unrelated += [line for line in lines[-1:] if not any(n in line for n in caused)]
    assert not unrelated, "the build also failed for other reasons:\n" + "\n".join(unrelated)


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


def test_missing_snippet_fails_the_build():
    import markdown
    from mkdocs.config import load_config
    from pymdownx.snippets import SnippetMissingError

    config = load_config(str(ROOT / "mkdocs.yml"))
    options = config["mdx_configs"]["pymdownx.snippets"]
    assert options.get("check_paths") is True, "mkdocs.yml must set pymdownx.snippets check_paths: true"
    renderer = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": options})
    assert "retain_grad" in renderer.convert('--8<-- "retain_grad.md"\n'), "an existing snippet was not included"
    with pytest.raises(SnippetMissingError, match="no_such_snippet.md"):
        renderer.convert('--8<-- "no_such_snippet.md"\n')


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
    if entry is None or not entry["count"]:
        assert not any("torch" in s for s in status), f"{page.rel} has no examples but says: {status}"
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
