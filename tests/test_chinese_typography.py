"""Chinese typography: autocorrect (autocorrect-py) finds nothing to fix on any Chinese page.

A missing space between Chinese and Latin text, or a full-width colon in Latin context, is easy to
type and hard to see in review. autocorrect lints each page with its Markdown (or Jupyter) grammar,
so inline code and URLs are left alone; .autocorrectrc, if there is one, configures it.
"""

import functools
import re
from pathlib import Path

import pytest

from tests.pages import outlines, pages
from tools.snippets import ROOT

CONFIG = ROOT / ".autocorrectrc"
CHINESE = [s for s in pages() + outlines() if s.is_zh]
# autocorrect reads the four-space-indented body of an admonition or tab as an indented code block
# and skips it; dedenting it (line numbers unchanged) has it checked like the rest of the page.
BLOCK = re.compile(r"^(?:!!!|\?\?\?\+?|===) ")


@functools.cache
def _autocorrect():
    try:
        import autocorrect_py
    except ImportError:
        pytest.fail("the Python package autocorrect-py is not installed (make install)")
    if CONFIG.exists():
        autocorrect_py.load_config(CONFIG.read_text(encoding="utf-8"))
    return autocorrect_py


def _dedent_blocks(text: str) -> str:
    lines, inside = [], False
    for line in text.splitlines(keepends=True):
        if BLOCK.match(line):
            inside = True
        elif line.strip() and not line.startswith("    "):
            inside = False
        lines.append(line[4:] if inside and line.startswith("    ") else line)
    return "".join(lines)


def findings(path: Path, name: str | None = None) -> list[str]:
    """`<name>:<line>: <old> -> <new>` for each fix autocorrect suggests (suffix: the grammar)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        text = _dedent_blocks(text)
    result = _autocorrect().lint_for(text, path.name)
    return [f"{name or path}:{line.line}: {line.old} -> {line.new}" for line in result.lines]


@pytest.mark.parametrize("source", CHINESE, ids=[s.rel for s in CHINESE])
def test_autocorrect_finds_nothing(source):
    found = findings(source.path, source.rel)
    assert not found, f"{source.rel}: autocorrect suggests changes:\n" + "\n".join(found)
