"""The search box of both languages, on the built site: Chinese words, digits, and every error line
a page prints, pasted as printed and as a terminal prints it (the browser job of tests/test_browser.py
typed them all)."""

from __future__ import annotations

import re

import pytest

from tests.search_box import CROSS_CHECK
from tests.test_browser import (  # noqa: F401  (browsed, builds: the session's fixtures)
    CHINESE_QUERIES, DIGITS, DRAWN, ERROR_SEARCHES, PASTED, PITFALLS, TERMINAL, as_a_terminal_prints, browsed, builds,
)

pytestmark = pytest.mark.browser


# --- Search ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("query", CHINESE_QUERIES)
def test_chinese_word_finds_chinese_pages(browsed, query):
    base, _, searches, _ = browsed
    links = searches["zh/"][query]
    assert links, f"searching {query!r} on the Chinese site found nothing"
    english = [link for link in links if not link.startswith(base + "zh/")]
    assert not english, f"searching {query!r} on the Chinese site found English pages: {english}"


@pytest.mark.parametrize("prefix", ["", "zh/"], ids=["en", "zh"])
def test_every_digit_finds_pages(browsed, prefix):
    _, _, searches, _ = browsed
    empty = [digit for digit in DIGITS if not searches[prefix][digit]]
    assert not empty, (f"searching {empty} on the {'Chinese' if prefix else 'English'} site found nothing: "
                       "a word missing from Lunr's word graph (tools/site/search_rank.py)")


@pytest.mark.parametrize("lang, anchor, message", ERROR_SEARCHES,
                         ids=[f"{lang}-{anchor}" for lang, anchor, _ in ERROR_SEARCHES])
def test_pasted_error_message_finds_its_pitfall(browsed, lang, anchor, message):
    """The pitfalls page among the first three pages of results, with the section's own link.
    Another page may come first where its heading quotes the same message (debugging-backward.md
    does for in-place errors)."""
    base, _, searches, _ = browsed
    prefix = "zh/" if lang == "zh" else ""
    links = searches[prefix][message]
    first = _result_pages(links, base)[:3]
    wanted = base + prefix + "pitfalls/"
    assert prefix + "pitfalls/" in first and any(
        link.startswith(wanted) and link.endswith("#" + anchor) for link in links), (
        f"{PITFALLS[lang].rel}: searching the message of #{anchor} shows, first: {first} ({links[:5]})"
    )


@pytest.mark.parametrize("prefix", ["", "zh/"], ids=["en", "zh"])
def test_links_read_from_the_search_worker_are_those_material_draws(browsed, prefix):
    """Long queries are answered from the search worker's message, not from the drawn list
    (tests/browser.py, _TAP_JS); for the first few of each language both were read."""
    _, _, searches, _ = browsed
    drawn = DRAWN[prefix]
    assert len(drawn) == CROSS_CHECK, f"{len(drawn)} long queries drawn on the {prefix or 'English'} site"
    for query, links in drawn.items():
        assert links, f"searching {query!r}: Material drew no result"
        assert [re.sub(r"\?h=[^#]*", "", link) for link in links] == searches[prefix][query], (
            f"searching {query!r}: the links read from the search worker differ from those Material drew")


def _result_pages(links: list[str], base: str) -> list[str]:
    """The pages of the search results, in their order: Material lists each page once, with its
    sections under it; '?h=' highlights the terms."""
    return list(dict.fromkeys(re.sub(r"[?#].*", "", link.removeprefix(base)) for link in links))


@pytest.mark.parametrize("prefix, text", sorted(PASTED),
                         ids=[f"{'zh' if p else 'en'}-{t[:60]}" for p, t in sorted(PASTED)])
def test_a_pasted_error_finds_a_page_that_shows_it(browsed, prefix, text):
    """Every error line a page prints, typed into the search box of its language, puts a page
    that prints it among the first three results (issue 26; tools/site/search_rank.py)."""
    _assert_among_first_three(browsed, prefix, text, PASTED[prefix, text], "the pages that print it")


@pytest.mark.parametrize("prefix, text", sorted(TERMINAL),
                         ids=[f"{'zh' if p else 'en'}-{t[:60]}" for p, t in sorted(TERMINAL)])
def test_a_line_pasted_from_a_terminal_finds_a_page_that_shows_it(browsed, prefix, text):
    """The same, for the line as a terminal prints it (as_a_terminal_prints): a file path before a
    warning, a build path after it, other shapes, tensor types and node names."""
    _assert_among_first_three(browsed, prefix, text, TERMINAL[prefix, text],
                              "the pages that show the page's own line")


def _assert_among_first_three(browsed, prefix: str, text: str, showing: set, which: str) -> None:
    base, _, searches, _ = browsed
    first = _result_pages(searches[prefix][text], base)[:3]
    assert set(first) & showing, (
        f"searching {text!r} on the {'Chinese' if prefix else 'English'} site shows first {first}; "
        f"{which}: {sorted(showing)}"
    )


def test_the_terminal_line_differs_where_a_terminal_adds_or_changes_text():
    assert as_a_terminal_prints("UserWarning: x (Triggered internally at...)") == (
        "/home/reader/project/train.py:42: UserWarning: x "
        "(Triggered internally at /pytorch/aten/src/ATen/core/TensorBody.h:494.)")
    assert as_a_terminal_prints("RuntimeError: [torch.FloatTensor [2, 3]], output 0 of ReluBackward0") == (
        "RuntimeError: [torch.cuda.HalfTensor [64, 128, 7, 7]], output 0 of AddmmBackward0")
    assert as_a_terminal_prints("ValueError: can't optimize a non-leaf Tensor") == "ValueError: can't optimize a non-leaf Tensor"
