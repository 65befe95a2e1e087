"""MkDocs hook: highlight each code block once, not once per language.

Both languages include the same snippets, and mkdocs-static-i18n builds the site once per language,
so Pygments lexed and formatted every example twice: about a fifth of the strict build's time.
pymdownx's `Highlight.highlight` returns the same HTML for the same arguments and configuration,
so its result is kept per (configuration, arguments). Not kept where it has a side effect: a
title in "html" mode goes into the page's HTML stash (`title_mode`, or an `auto_title` map).
"""

from __future__ import annotations

import functools

from pymdownx import highlight

_ORIGINAL = getattr(highlight.Highlight.highlight, "__wrapped__", highlight.Highlight.highlight)
_RESULTS: dict[tuple, str] = {}


@functools.wraps(_ORIGINAL)
def _highlight(self, src, language, *args, **kwargs):
    if self.title_mode != "text" or self.auto_title:
        return _ORIGINAL(self, src, language, *args, **kwargs)
    config = tuple(sorted((name, repr(value)) for name, value in vars(self).items() if name != "md"))
    key = (config, src, language, repr(args), repr(sorted(kwargs.items())))
    if key not in _RESULTS:
        _RESULTS[key] = _ORIGINAL(self, src, language, *args, **kwargs)
    return _RESULTS[key]


highlight.Highlight.highlight = _highlight
