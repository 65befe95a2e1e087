"""Build the downloadable notebooks from the snippets, so their code is the tested code.

    python -m tools.notebook            # writes docs/notebooks/<name>.ipynb and <name>.zh.ipynb

An outline, tools/notebooks/<name>.md (English) or <name>.zh.md (Chinese), is Markdown in which a
line `--8<-- "snippet.md"` becomes a code cell holding that snippet's code (prompts and outputs
stripped); everything between such lines becomes a Markdown cell. The notebooks are saved without
outputs: mkdocs-jupyter executes them during the build (allow_errors: false), and
tests/test_generated.py checks that the committed files equal a fresh build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tools.snippets import DOCS, ROOT, SNIPPETS, Snippet

OUTLINES = ROOT / "tools" / "notebooks"
INCLUDE = re.compile(r'^--8<-- "(?P<name>[^"]+)"\s*$')


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines:
        lines[-1] = lines[-1].rstrip("\n")
    return lines


def build(outline: Path) -> str:
    cells: list[dict] = []
    prose: list[str] = []

    def flush_prose() -> None:
        text = "".join(prose).strip("\n")
        prose.clear()
        if text:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _lines(text)})

    for line in outline.read_text(encoding="utf-8").splitlines(keepends=True):
        include = INCLUDE.match(line)
        if include is None:
            prose.append(line)
            continue
        flush_prose()
        snippet = Snippet.load(SNIPPETS / include["name"])
        cells.append(
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {"snippet": snippet.name},
                "outputs": [],
                "source": _lines(snippet.script().rstrip("\n") + "\n"),
            }
        )
    flush_prose()
    for number, cell in enumerate(cells, start=1):
        cell["id"] = f"cell-{number:02d}"
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def targets() -> dict[Path, Path]:
    """Outline -> notebook path under docs/notebooks/."""
    return {
        outline: DOCS / "notebooks" / outline.name.replace(".md", ".ipynb")
        for outline in sorted(OUTLINES.glob("*.md"))
    }


if __name__ == "__main__":
    for outline, notebook in targets().items():
        notebook.write_text(build(outline), encoding="utf-8")
        print(f"wrote {notebook.relative_to(ROOT)}")
