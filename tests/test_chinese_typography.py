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
    # In parts of about CHUNK lines, cut at a blank line outside a code fence: in a full run,
    # autocorrect's parser raised "call limit reached" on the 1,900-line Chinese Questions list (the
    # same file passed alone); short parses stay clear of that limit.
    found, start, lines = [], 0, text.splitlines(keepends=True)
    fenced, inside = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            inside = not inside
        fenced.append(inside)
    while start < len(lines):
        end = min(start + CHUNK, len(lines))
        while end < len(lines) and (lines[end - 1].strip() or fenced[end - 1]):
            end += 1
        result = _autocorrect().lint_for("".join(lines[start:end]), path.name)
        found += [f"{name or path}:{line.line + start}: {line.old} -> {line.new}" for line in result.lines]
        start = end
    return found


CHUNK = 300


@pytest.mark.parametrize("source", CHINESE, ids=[s.rel for s in CHINESE])
def test_autocorrect_finds_nothing(source):
    found = findings(source.path, source.rel)
    assert not found, f"{source.rel}: autocorrect suggests changes:\n" + "\n".join(found)


# A half-width space between two Chinese characters ("在 完整反向钩子里") is what a search-and-replace
# of an English term leaves behind; autocorrect keeps it. Code, link targets and HTML are left out.
CJK = "\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
_SPACED = re.compile(f"(?<=[{CJK}])[ \t]+(?=[{CJK}])")


def spaced_chinese(path: Path, name: str) -> list[str]:
    """`<name>:<line>: <text around it>` for each space between two Chinese characters."""
    found, fence = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or line.startswith("--8<--"):
            continue
        text = re.sub(r"\]\([^)]*\)", "]", re.sub(r"`[^`]*`", "C", line))
        text = re.sub(r"<[^>]+>", "H", text)
        found += [f"{name}:{number}: ...{text[max(0, m.start() - 8):m.end() + 8]}..." for m in _SPACED.finditer(text)]
    return found


SPACED_SOURCES = [(s.path, s.rel) for s in CHINESE if s.path.suffix == ".md"] + [
    (ROOT / "snippets/questions/zh.md", "snippets/questions/zh.md (from questions.yml)")]


@pytest.mark.parametrize("path, name", SPACED_SOURCES, ids=[name.split(" ")[0] for _, name in SPACED_SOURCES])
def test_no_space_between_two_chinese_characters(path, name):
    found = spaced_chinese(path, name)
    assert not found, "a half-width space between Chinese characters (left by a replacement?):\n" + "\n".join(found)


def test_the_space_check_can_fail(tmp_path):
    page = tmp_path / "page.zh.md"
    page.write_text("在 完整反向钩子里，`a 的`、[链接](x 的 y)\n```\n中 文\n```\n", encoding="utf-8")
    assert [line.split(": ")[0] for line in spaced_chinese(page, "page")] == ["page:1"]
