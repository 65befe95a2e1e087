"""llms.txt, llms-full.txt and the Markdown twins (tools/site/llms.py), read from the session's build.

Each language root lists every page of its language under its nav section, linking to the page's
twin (`<page>/index.html.md`); each twin holds the code and the outputs of the snippets its page
includes, and no `--8<--` line; llms-full.txt holds every twin in nav order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.built_site import SITE_URL, builds, site  # noqa: F401  (the session's strict build)
from tests.pages import Source, pages, site_path
from tools.snippets import ROOT, SNIPPETS, Snippet

PAGES = pages()
LANGUAGES = ["en", "zh"]
ENTRY = re.compile(r"^- \[(?P<title>(?:\\.|[^\]\\])*)\]\((?P<url>[^)\s]+)\)(?:: (?P<description>.+))?$")
H1 = re.compile(r"^# (?P<title>.+?)\s*$", re.MULTILINE)
LINK = re.compile(r"\]\((?:https?://|[\w./-]+\.(?:md|ipynb))[^)\s]*\)")  # a link's target, not code's x[0](y)
LINK_TO_SITE = re.compile(r"\]\(" + re.escape(SITE_URL) + r"(?P<path>[^)#\s]*)")


class _Loader(yaml.SafeLoader):
    """mkdocs.yml without MkDocs: its !ENV and !relative values are not needed here."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
CONFIG = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def _sections() -> dict[str, str]:
    """docs-relative English source -> its top-level nav title (a top-level page: its own)."""
    found = {}
    for item in CONFIG["nav"]:
        (title, value), = item.items()
        for entry in value if isinstance(value, list) else [value]:
            found[next(iter(entry.values())) if isinstance(entry, dict) else entry] = title
    return found


def _translations() -> dict[str, dict[str, str]]:
    i18n = next(p["i18n"] for p in CONFIG["plugins"] if isinstance(p, dict) and "i18n" in p)
    return {lang["locale"]: lang.get("nav_translations") or {} for lang in i18n["languages"]}


SECTIONS = _sections()
TRANSLATIONS = _translations()


def _lang(page: Source) -> str:
    return "zh" if page.is_zh else "en"


def _english_src(page: Source) -> str:
    return page.path.relative_to(ROOT / "docs").as_posix().replace(".zh.", ".")


def _twin(page: Source, site: Path) -> Path:
    return site_path(page, site).with_name("index.html.md")


def _url(path: Path, site: Path) -> str:
    return SITE_URL + path.relative_to(site).as_posix()


def _root(site: Path, lang: str) -> Path:
    return site if lang == "en" else site / lang


def _listing(site: Path, lang: str) -> dict[str, tuple[str, str]]:
    """llms.txt of a language: twin URL -> (section, title)."""
    path = _root(site, lang) / "llms.txt"
    assert path.is_file(), f"{path.relative_to(site)} was not written"
    found, section = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif (entry := ENTRY.match(line)) and section:
            found[entry["url"]] = (section, entry["title"].replace("\\[", "[").replace("\\]", "]"))
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_llms_txt_lists_every_page(site, lang):
    listed = _listing(site, lang)
    problems = []
    for page in (p for p in PAGES if _lang(p) == lang):
        url = _url(_twin(page, site), site)
        if url not in listed:
            problems.append(f"{page.rel}: not listed (expected a link to {url})")
            continue
        section, title = listed[url]
        english = SECTIONS.get(_english_src(page))
        expected = TRANSLATIONS.get(lang, {}).get(english, english)
        if section != expected:
            problems.append(f"{page.rel}: listed under '## {section}', not under its nav section '## {expected}'")
        heading = H1.search(page.text)
        if heading is None or title != heading["title"]:
            problems.append(f"{page.rel}: listed as '{title}', not by its H1 '{heading and heading['title']}'")
    assert not problems, f"{lang} llms.txt:\n" + "\n".join(problems)
    own = [p for p in PAGES if _lang(p) == lang]
    assert len(listed) == len(own), f"{lang} llms.txt lists {len(listed)} pages; the language has {len(own)}"


def _checks(page: Source, name: str) -> list[tuple[str, str]]:
    """(what, text) that the twin must contain for one include of the page."""
    path = SNIPPETS / name
    snippet = Snippet.load(path)
    if not snippet.fences():  # a table the page includes: each row, links aside
        return [(f"{name}: row {row!r}", LINK.sub("]", row))
                for row in path.read_text(encoding="utf-8").splitlines() if row.strip()]
    examples = snippet.examples()
    notebook = page.path.suffix == ".ipynb"  # code cells without prompts, outputs as printed
    prompt = "" if notebook else ">>> "
    code = [prompt + example.source.splitlines()[0] for example in examples]
    wants = [example.want.replace("<BLANKLINE>", "") if notebook else example.want for example in examples]
    return ([(f"{name}: code {line!r}", line) for line in code]
            + [(f"{name}: output {want.splitlines()[0]!r}", want.rstrip("\n")) for want in wants if want.strip()])


@pytest.mark.parametrize("page", PAGES, ids=[p.rel for p in PAGES])
def test_twin_has_the_snippets_inlined(site, page):
    twin = _twin(page, site)
    assert twin.is_file(), f"{page.rel}: no Markdown twin at {twin.relative_to(site)}"
    text = twin.read_text(encoding="utf-8")
    assert not re.search(r"^\s*--8<--", text, re.MULTILINE), f"{page.rel}: its twin keeps a --8<-- line"
    heading = H1.search(page.text)
    assert heading and text.startswith(heading.group(0)), f"{page.rel}: its twin does not start with the page's H1"
    unlinked = LINK.sub("]", text)  # a row's links are absolute in the twin
    missing = [what for name in page.includes() for what, needed in _checks(page, name) if needed not in unlinked]
    missing = list(dict.fromkeys(missing))
    assert not missing, f"{page.rel}: its twin lacks\n" + "\n".join(missing)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_full_file_holds_every_twin_in_nav_order(site, lang):
    full = (_root(site, lang) / "llms-full.txt").read_text(encoding="utf-8")
    positions = []
    for url in _listing(site, lang):
        twin = site / url[len(SITE_URL):]
        text = twin.read_text(encoding="utf-8") if twin.is_file() else None
        assert text and text in full, f"{lang} llms-full.txt lacks {twin.relative_to(site)}"
        positions.append((full.index(text), twin.relative_to(site).as_posix()))
    assert positions == sorted(positions), f"{lang} llms-full.txt is not in llms.txt's (nav) order"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_llms_links_lead_to_files_of_the_site(site, lang):
    """Every link into the site from llms.txt and the twins resolves; no path of this machine."""
    root = _root(site, lang)
    files = [root / "llms.txt", root / "llms-full.txt"]
    files += [_twin(p, site) for p in PAGES if _lang(p) == lang]
    broken, local = [], []
    for path in files:
        text = path.read_text(encoding="utf-8")
        broken += [f"{path.relative_to(site)}: {m['path']}" for m in LINK_TO_SITE.finditer(text)
                   if not (site / m["path"]).is_file()]
        if str(ROOT) in text:
            local.append(str(path.relative_to(site)))
    assert not broken, "links to files the site does not have:\n" + "\n".join(sorted(set(broken)))
    assert not local, f"a path of this machine ({ROOT}) in: " + ", ".join(local)
