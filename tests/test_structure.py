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


def translated_prose(text: str) -> str:
    """The Chinese a translator wrote: prose without code, English quotes ("…", the glossary's
    rule for quoted English), link targets, heading anchors or HTML tags, which keep English
    words on purpose."""
    text = re.sub(r'"[^"\n]*"', '""', text)
    text = re.sub(r"\]\([^)\n]*\)", "]", text)
    text = re.sub(r"\{[^}\n]*#[^}\n]*\}", "", text)
    return re.sub(r"<[^>\n]+>", "", text)


def _variant_pattern(variant: str) -> re.Pattern:
    """A Latin variant ("loss", "stage 3") matches as a whole word only: "loss" is not in "glossary"."""
    before = r"(?<![A-Za-z0-9_-])" if re.match(r"[A-Za-z0-9]", variant) else ""
    after = r"(?![A-Za-z0-9_-])" if re.search(r"[A-Za-z0-9]$", variant) else ""
    return re.compile(before + re.escape(variant) + after)


def avoided_terms_in(text: str) -> list[str]:
    """"'variant' (use 'term')" for each glossary variant in the Chinese prose `text`."""
    prose = translated_prose(text)
    return [f"'{variant}' (use '{preferred}')" for variant, preferred in _avoided_terms().items()
            if _variant_pattern(variant).search(prose)]


def test_glossary_lists_avoided_terms():
    assert len(_avoided_terms()) >= 10, "could not read the '避免的写法' column of docs/glossary.zh.md"


def test_a_latin_variant_matches_whole_words_outside_quotes():
    assert avoided_terms_in("用 loss 反向传播") and avoided_terms_in("ZeRO stage 3 下")
    assert not avoided_terms_in('见 "the loss is" 和[术语表](glossary.md)与 { #aux-loss }，以及 lossy')


@each_chinese_but_glossary
def test_chinese_pages_use_the_glossary_terms(source):
    found = avoided_terms_in(source.prose())
    assert not found, f"{source.rel}: uses " + ", ".join(found) + "; the glossary's terms are in docs/glossary.zh.md"


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
