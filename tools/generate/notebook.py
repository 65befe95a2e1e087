"""Build the downloadable notebooks from the snippets, so their code is the tested code.

    python -m tools.generate.notebook            # writes docs/notebooks/<name>.ipynb and <name>.zh.ipynb

An outline, tools/generate/notebooks/<name>.md (English) or <name>.zh.md (Chinese), is Markdown in which a
line `--8<-- "<page>/<snippet>.md"` becomes a code cell holding that snippet's code (prompts and outputs
stripped); everything between such lines becomes a Markdown cell. Each notebook is then executed
in a fresh kernel and saved with its outputs, so the site and the download show what the code
printed. tests/test_generated.py checks that the committed cells equal a fresh build and that each
code cell's output equals its snippet's expected output, which the snippet tests prove by running
the same code. The site build does not execute notebooks again (GUIDE_EXECUTE_NOTEBOOKS=true does).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tools.snippets import DOCS, ROOT, SNIPPETS, Snippet

OUTLINES = Path(__file__).with_name("notebooks")
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
    return notebook_json(cells)


def notebook_json(cells: list[dict]) -> str:
    """An nbformat 4.5 notebook of these cells (numbered ids, a Python 3 kernel), as saved."""
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


def execute(text: str, cwd: Path) -> str:
    """Run a built notebook in a fresh kernel; return it with outputs, deterministically written."""
    import nbformat
    from nbclient import NotebookClient

    executed = nbformat.reads(text, as_version=4)
    NotebookClient(
        executed, timeout=300, kernel_name="python3", allow_errors=False, record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
    ).execute()
    notebook = json.loads(text)  # keep the built layout; take only the outputs from the run
    for cell, ran in zip(notebook["cells"], executed.cells, strict=True):
        if cell["cell_type"] == "code":
            cell["execution_count"] = ran.execution_count
            cell["outputs"] = [_tidy(output) for output in _coalesce(ran.outputs)]
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def _coalesce(outputs: list[dict]) -> list[dict]:
    """Join consecutive stream outputs of one stream: how a print is split is the kernel's chance."""
    joined: list[dict] = []
    for output in outputs:
        if (output["output_type"] == "stream" and joined and joined[-1]["output_type"] == "stream"
                and joined[-1]["name"] == output["name"]):
            joined[-1]["text"] = _text(joined[-1]) + _text(output)
        else:
            joined.append(json.loads(json.dumps(output)))
    return joined


def _text(output: dict) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def _tidy(output: dict) -> dict:
    if output["output_type"] == "stream":
        text = _text(output).splitlines(keepends=True)
        return {"name": output["name"], "output_type": "stream", "text": text}
    return output


def strip_outputs(text: str) -> str:
    """The notebook as built from its outline, before execution."""
    notebook = json.loads(text)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def stdout(text: str) -> dict[str, str]:
    """Snippet name -> what its cell printed, from a saved notebook."""
    printed = {}
    for cell in json.loads(text)["cells"]:
        if cell["cell_type"] == "code":
            printed[cell["metadata"]["snippet"]] = "".join(
                _text(output) for output in cell["outputs"]
                if output["output_type"] == "stream" and output["name"] == "stdout"
            )
    return printed


def targets() -> dict[Path, Path]:
    """Outline -> notebook path under docs/notebooks/."""
    return {
        outline: DOCS / "notebooks" / outline.name.replace(".md", ".ipynb")
        for outline in sorted(OUTLINES.glob("*.md"))
    }


if __name__ == "__main__":
    for outline, notebook in targets().items():
        notebook.write_text(execute(build(outline), notebook.parent), encoding="utf-8")
        print(f"wrote {notebook.relative_to(ROOT)} (executed)")
