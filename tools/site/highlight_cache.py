"""MkDocs hook: highlight each code block once, not once per language, and not again in the next
build while nothing it depends on changed.

Both languages include the same snippets, and mkdocs-static-i18n builds the site once per language,
so Pygments lexed and formatted every example twice: about a fifth of the strict build's time.
pymdownx's `Highlight.highlight` returns the same HTML for the same arguments and configuration,
so its result is kept per (configuration, arguments). Not kept where it has a side effect: a
title in "html" mode goes into the page's HTML stash (`title_mode`, or an `auto_title` map).

Kept on disk too, in .cache/ (not in git): each language's pass writes the blocks it highlighted
to .cache/highlight-<language>.pickle at the end of its build, and the next build reads both
files before it forks its languages (tools/site/parallel_languages.py). An entry is found only
under the same Pygments, pymdown-extensions and Markdown versions, configuration and arguments
(all hashed into its key); a file holds only what its last build used, so nothing stale piles up.
Measured: 1.5 CPU-s of each pass's highlighting saved.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import sys
from pathlib import Path

from pymdownx import highlight

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(ROOT))
from tools.site import disk_cache  # noqa: E402

_ORIGINAL = getattr(highlight.Highlight.highlight, "__wrapped__", highlight.Highlight.highlight)
_RESULTS: dict[str, str] = {}   # key -> HTML: what this process highlighted or read from disk
_USED: set[str] = set()          # the keys this process's build asked for
STORE = disk_cache.STORE
_VERSIONS = tuple(importlib.metadata.version(name) for name in ("pygments", "pymdown-extensions", "markdown"))


def _key(self, src, language, args, kwargs) -> str:
    config = tuple(sorted((name, repr(value)) for name, value in vars(self).items() if name != "md"))
    return hashlib.sha256(repr((_VERSIONS, config, src, language, args, sorted(kwargs.items()))).encode()).hexdigest()


@functools.wraps(_ORIGINAL)
def _highlight(self, src, language, *args, **kwargs):
    if self.title_mode != "text" or self.auto_title:
        return _ORIGINAL(self, src, language, *args, **kwargs)
    key = _key(self, src, language, args, kwargs)
    _USED.add(key)
    if key not in _RESULTS:
        _RESULTS[key] = _ORIGINAL(self, src, language, *args, **kwargs)
    return _RESULTS[key]


highlight.Highlight.highlight = _highlight


def load(folder: Path = STORE) -> None:
    for stored in disk_cache.load("highlight-*.pickle", folder):
        _RESULTS.update(stored)


def save(language: str, folder: Path = STORE) -> None:
    disk_cache.save(f"highlight-{language}.pickle", {key: _RESULTS[key] for key in _USED if key in _RESULTS}, folder)


load()


def on_post_build(config, **kwargs):
    i18n = config.plugins.get("i18n")
    save(i18n.current_language if i18n is not None else config.theme.get("language", "en"))
