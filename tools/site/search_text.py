"""MkDocs hook: Material's search plugin reads each page without its <span> tags.

The search plugin builds the index by feeding every page's HTML to Python's HTMLParser (its
`Parser`, in `SearchIndex.add_entry_from_context`). Pygments wraps every token of a code block in
a <span>, and the guide's pages are mostly code and outputs: parsing those tags was about half of
the strict build's time (cProfile, 2026-11-29: 14.6 of 31 s under the profiler, 326,000 start
tags). A <span> carries no text, and nothing the parser reads from a tag applies to it (it skips
an element for `data-search-exclude` or `class="linenodiv"`, and keeps only p, code, pre, lists,
sub and sup), so the parser now gets the page with its span tags removed; the page itself is
unchanged. Measured on this tree: both languages' search_index.json, and every other file of the
built site, byte for byte the same with and without this hook (diff -r), and the strict build 10.1 s
instead of 13.9 s on the idle 2-core machine. tests/test_search_text.py checks that the parser
indexes the same sections, titles and text with and without the spans on six of the guide's pages.

The plugin also cuts every run of Chinese characters with jieba, one call per run: 56,000 runs in
a build, most of them words it has cut before (in code comments, outputs, headings). jieba's cut of
a string depends only on the string and its dictionary, which the build never changes, so each
distinct run is cut once and the words are reused (_CutOnce; the same test compares the index).
"""

from __future__ import annotations

import functools
import re

_SPAN = re.compile(r'</?span(?:\s+[\w:-]+(?:="[^"]*")?)*\s*>')
_PATCHED = "_guide_without_spans"


def _without_spans(add):
    def add_entry_from_context(self, page):
        content = page.content
        page.content = _SPAN.sub("", content)
        try:
            return add(self, page)
        finally:
            page.content = content

    setattr(add_entry_from_context, _PATCHED, True)
    return add_entry_from_context


class _CutOnce:
    """jieba, with cut(text) remembered per text; every other name is jieba's own."""

    def __init__(self, jieba):
        self._jieba = jieba
        self._cut = functools.lru_cache(maxsize=None)(lambda text: tuple(jieba.cut(text)))

    def cut(self, text, *args, **kwargs):
        return self._cut(text) if not args and not kwargs else self._jieba.cut(text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._jieba, name)


def on_config(config):
    from material.plugins.search import plugin
    from material.plugins.search.plugin import SearchIndex

    if plugin.jieba is not None and not isinstance(plugin.jieba, _CutOnce):
        plugin.jieba = _CutOnce(plugin.jieba)

    if not getattr(SearchIndex.add_entry_from_context, _PATCHED, False):  # once per process
        SearchIndex.add_entry_from_context = _without_spans(SearchIndex.add_entry_from_context)
    return config
