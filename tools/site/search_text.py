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
The cuts are kept on disk too, as tools/site/highlight_cache.py keeps its blocks: each pass writes
the runs it cut to .cache/search-cuts-<language>.pickle at the end of its build, and the next build
reads them, under the same jieba release and dictionary only. With every run found there, jieba's
dictionary is never loaded (tools/site/parallel_languages.py no longer loads it before the fork):
the strict build took 7.4-7.7 s instead of 9.1-9.5 s on the 2-core machine, warm (2026-11-30).

And the parser reads each distinct page once: its sections depend only on the HTML it is fed (and
Material's parser), so they are kept, pickled, under the HTML's SHA-1 in
.cache/search-sections-<language>.pickle, and a page whose HTML has not changed gets a copy of them
without being parsed (_parsing_once). Both languages' search_index.json and every other built file
the same, byte for byte (diff -r against a build without it); the strict build, warm, 6.75-6.95 s
instead of 7.25-7.42 s, four builds each, alternated (2026-11-30).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(ROOT))
from tools.site import disk_cache  # noqa: E402

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


STORE = disk_cache.STORE


def _stamp(jieba) -> tuple:
    """The jieba release and dictionary a cut depends on."""
    dictionary = getattr(getattr(jieba, "dt", None), "dictionary", None) or ""
    size = os.path.getsize(dictionary) if dictionary and os.path.isfile(dictionary) else None
    return getattr(jieba, "__version__", ""), os.path.basename(dictionary), size


class _CutOnce:
    """jieba, with cut(text) remembered per text, in this build and on disk for the next; every
    other name is jieba's own."""

    def __init__(self, jieba, folder: Path = STORE):
        self._jieba, self._stamp = jieba, _stamp(jieba)
        self._words: dict = {}
        self._used: set = set()
        for stored in disk_cache.load("search-cuts-*.pickle", folder):
            if isinstance(stored, dict) and stored.get("stamp") == self._stamp:
                self._words.update(stored["words"])

    def cut(self, text, *args, **kwargs):
        if args or kwargs:
            return self._jieba.cut(text, *args, **kwargs)
        words = self._words.get(text)
        if words is None:
            words = self._words[text] = tuple(self._jieba.cut(text))
        self._used.add(text)
        return words

    def save(self, language: str, folder: Path = STORE) -> None:
        """Write the runs this build cut."""
        disk_cache.save(f"search-cuts-{language}.pickle",
                        {"stamp": self._stamp, "words": {t: self._words[t] for t in self._used}}, folder)

    def __getattr__(self, name):
        return getattr(self._jieba, name)


def _sections_stamp() -> tuple:
    """What the parser's sections depend on besides the HTML: Material's parser, Python's pickle."""
    import material

    return material.__version__, pickle.HIGHEST_PROTOCOL


class _Sections(dict):
    """{sha1 of the HTML fed to the parser: its sections, pickled}, from earlier builds and this one."""

    def __init__(self, folder: Path = STORE):
        super().__init__()
        self.stamp, self.used = _sections_stamp(), set()
        for stored in disk_cache.load("search-sections-*.pickle", folder):
            if isinstance(stored, dict) and stored.get("stamp") == self.stamp:
                self.update(stored["sections"])

    def save(self, language: str, folder: Path = STORE) -> None:
        """Write the pages this build indexed."""
        disk_cache.save(f"search-sections-{language}.pickle",
                        {"stamp": self.stamp, "sections": {key: self[key] for key in self.used}}, folder)


def _parsing_once(parser_class, sections: _Sections):
    """Material's parser, which reads the HTML it is fed once per distinct page: a page whose HTML
    it has parsed before (in this build or an earlier one) gets copies of the same sections."""

    class ParsedOnce(parser_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._fed = []

        def feed(self, data):
            self._fed.append(data)

        def close(self):
            html = "".join(self._fed)
            key = hashlib.sha1(html.encode("utf-8", "surrogatepass")).hexdigest()
            sections.used.add(key)
            if key in sections:
                self.data = pickle.loads(sections[key])
                return
            super().feed(html)
            super().close()
            sections[key] = pickle.dumps(self.data, pickle.HIGHEST_PROTOCOL)

    ParsedOnce.__qualname__ = ParsedOnce.__name__ = parser_class.__name__
    setattr(ParsedOnce, _PATCHED, sections)
    return ParsedOnce


def on_config(config):
    from material.plugins.search import plugin
    from material.plugins.search.plugin import SearchIndex

    if plugin.jieba is not None and not isinstance(plugin.jieba, _CutOnce):
        plugin.jieba = _CutOnce(plugin.jieba)

    if getattr(plugin.Parser, _PATCHED, None) is None:  # once per process
        plugin.Parser = _parsing_once(plugin.Parser, _Sections())

    if not getattr(SearchIndex.add_entry_from_context, _PATCHED, False):  # once per process
        SearchIndex.add_entry_from_context = _without_spans(SearchIndex.add_entry_from_context)
    return config


def on_post_build(config):
    from material.plugins.search import plugin

    i18n = config.plugins.get("i18n")
    language = i18n.current_language if i18n is not None else config.theme.get("language", "en")
    if isinstance(plugin.jieba, _CutOnce) and plugin.jieba._used:
        plugin.jieba.save(language)
    sections = getattr(plugin.Parser, _PATCHED, None)
    if isinstance(sections, _Sections) and sections.used:
        sections.save(language)
        sections.used = set()  # `mkdocs serve` builds again in this process
