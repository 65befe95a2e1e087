"""Files generated from torch or from the snippets must equal a fresh generation."""

import pytest

from tools import grad_cam_figure, notebook, toy_graph

NOTEBOOKS = notebook.targets()


def test_toy_graph_diagram_is_current():
    assert toy_graph.OUTPUT.read_text(encoding="utf-8") == toy_graph.svg(), (
        "docs/assets/toy-graph.svg differs from torch's values: run `python -m tools.toy_graph`"
    )


def test_grad_cam_figure_is_current():
    assert grad_cam_figure.OUTPUT.read_text(encoding="utf-8") == grad_cam_figure.svg(), (
        "docs/assets/grad-cam.svg differs from the grad_cam snippet's run: "
        "run `python -m tools.grad_cam_figure`"
    )


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook outline under tools/notebooks/"


@pytest.mark.parametrize("outline", NOTEBOOKS, ids=[o.name for o in NOTEBOOKS])
def test_notebook_is_current(outline):
    target = NOTEBOOKS[outline]
    assert target.is_file(), f"{target.name} is missing: run `python -m tools.notebook`"
    assert target.read_text(encoding="utf-8") == notebook.build(outline), (
        f"docs/notebooks/{target.name} is out of date with its outline or snippets: "
        "run `python -m tools.notebook`"
    )
