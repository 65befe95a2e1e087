"""The guide's shape: twin pages, shared snippets, anchors, glossary terms. Fast, no build."""

import re
import unicodedata

import pytest

from tests.pages import Source, outlines, pages
from tools.snippets import DOCS, SNIPPETS, script_paths, snippet_paths

PAGES = pages()
SOURCES = PAGES + outlines()       # notebook outlines follow the same rules as pages


def _each(sources):
    return pytest.mark.parametrize("source", sources, ids=[s.rel for s in sources])


each_source = _each(SOURCES)
each_english = _each([s for s in SOURCES if not s.is_zh])
each_chinese = _each([s for s in SOURCES if s.is_zh])
each_chinese_but_glossary = _each([s for s in SOURCES if s.is_zh and s.path != DOCS / "glossary.zh.md"])
each_markdown = _each([s for s in SOURCES if not s.is_notebook])


def _twin(source):
    return Source(source.twin)


def test_there_are_pages_in_both_languages():
    assert any(p.is_zh for p in PAGES) and any(not p.is_zh for p in PAGES)


@each_source
def test_has_a_twin_in_the_other_language(source):
    language = "English" if source.is_zh else "Chinese"
    assert source.twin.exists(), f"{source.rel}: its {language} version {source.twin.name} is missing"


@each_english
def test_both_languages_include_the_same_snippets_in_order(source):
    if not source.twin.exists():
        pytest.fail(f"{source.rel}: no Chinese twin")
    # a list generated per language (snippets/questions/en.md, zh.md) counts as the same include
    english = source.includes()
    chinese = [re.sub(r"/zh\.md$", "/en.md", name) for name in _twin(source).includes()]
    assert english == chinese, (
        f"{source.rel} includes {english}\n{_twin(source).rel} includes {chinese}\n"
        "Both languages must include the same snippets in the same order."
    )


@each_source
def test_included_snippets_exist(source):
    for name in source.includes():
        assert (SNIPPETS / name).is_file(), f"{source.rel}: includes snippets/{name}, which does not exist"


def test_every_snippet_is_included_somewhere():
    included = {name for source in SOURCES for name in source.includes()}
    orphans = [
        p.relative_to(SNIPPETS.parent).as_posix()
        for p in snippet_paths() + script_paths()
        if p.relative_to(SNIPPETS).as_posix() not in included
    ]
    assert not orphans, f"snippets no page includes: {orphans}"


@each_markdown
def test_every_heading_has_an_explicit_english_anchor(source):
    for line, anchor in source.headings():
        assert anchor, f"{source.rel}: heading {line!r} needs an explicit {{ #english-anchor }}"
        assert anchor.isascii(), f"{source.rel}: anchor of {line!r} must be English"


@each_english
def test_both_languages_share_heading_anchors(source):
    if not source.twin.exists():
        pytest.fail(f"{source.rel}: no Chinese twin")
    def shape(src):  # anchors; for notebooks, the heading levels
        return [line.split()[0] if src.is_notebook else anchor for line, anchor in src.headings()]

    english, chinese = shape(source), shape(_twin(source))
    assert english == chinese, (
        f"{source.rel} has anchors {english}\n{_twin(source).rel} has {chinese}\n"
        "Links and the language switcher rely on the same anchors, in the same order."
    )


def _avoided_terms():
    """'避免的写法' column of the Chinese glossary: variant -> preferred term."""
    table = (DOCS / "glossary.zh.md").read_text(encoding="utf-8")
    avoided = {}
    for row in re.findall(r"^\|(.+)\|\s*$", table, re.MULTILINE):
        cells = [cell.strip() for cell in row.split("|")]
        if len(cells) >= 3 and cells[2] and not set(cells[0]) <= set("-: "):
            for variant in re.split(r"[、,，]", cells[2]):
                if variant.strip():
                    avoided[variant.strip()] = cells[0]
    return avoided


def test_glossary_lists_avoided_terms():
    assert len(_avoided_terms()) >= 10, "could not read the '避免的写法' column of docs/glossary.zh.md"


@each_chinese_but_glossary
def test_chinese_pages_use_the_glossary_terms(source):
    prose = source.prose()
    for variant, preferred in _avoided_terms().items():
        assert variant not in prose, (
            f"{source.rel}: uses '{variant}'; the glossary term is '{preferred}' (docs/glossary.zh.md)"
        )


@each_chinese
def test_chinese_pages_are_written_in_chinese(source):
    letters = [c for c in source.prose() if c.isalpha()]
    han = sum(1 for c in letters if unicodedata.name(c, "").startswith("CJK UNIFIED"))
    assert letters and han / len(letters) > 0.4, (
        f"{source.rel}: only {han} of {len(letters)} letters are Chinese; is it still the English text?"
    )


@_each([s for s in SOURCES if s.is_notebook])
def test_notebook_headings_have_no_inline_code(source):
    """mkdocs-jupyter builds the page's table of contents from plain text and drops `code`."""
    for line, _ in source.headings():
        assert "`" not in line, f"{source.rel}: heading {line!r} would lose its code in the table of contents"


def test_decision_page_links_every_technique_page():
    """The decision page is the map: every technique page must be reachable from it."""
    techniques = {p.relative_to(DOCS).as_posix() for p in (DOCS / "techniques").glob("*.md") if ".zh." not in p.name}
    for page in ("decision.md", "decision.zh.md"):
        linked = set(re.findall(r"\]\((techniques/[\w-]+\.md)", (DOCS / page).read_text(encoding="utf-8")))
        missing = sorted(techniques - linked)
        assert not missing, f"docs/{page} does not link: {missing}"
