"""Files generated from torch or from the snippets must equal a fresh generation."""

import doctest
import json

import pytest

from tools.generate import grad_cam_figure, grad_norm_figure, notebook, toy_graph
from tools.snippets import FLAGS, Snippet, find

NOTEBOOKS = notebook.targets()


def test_toy_graph_diagram_is_current():
    assert toy_graph.OUTPUT.read_text(encoding="utf-8") == toy_graph.svg(), (
        "docs/assets/toy-graph.svg differs from torch's values: run `python -m tools.generate.toy_graph`"
    )


def test_grad_cam_figure_is_current():
    assert grad_cam_figure.OUTPUT.read_text(encoding="utf-8") == grad_cam_figure.svg(), (
        "docs/assets/grad-cam.svg differs from the grad_cam snippet's run: "
        "run `python -m tools.generate.grad_cam_figure`"
    )


def test_grad_norm_figure_is_current():
    data = grad_norm_figure.series()
    for path, language in ((grad_norm_figure.OUTPUT, "en"), (grad_norm_figure.OUTPUT_ZH, "zh")):
        assert path.read_text(encoding="utf-8") == grad_norm_figure.svg(language, data), (
            f"docs/assets/{path.name} differs from a fresh run: "
            "run `python -m tools.generate.grad_norm_figure`"
        )


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook outline under tools/generate/notebooks/"


@pytest.mark.parametrize("outline", NOTEBOOKS, ids=[o.name for o in NOTEBOOKS])
def test_notebook_is_current(outline):
    target = NOTEBOOKS[outline]
    assert target.is_file(), f"{target.name} is missing: run `python -m tools.generate.notebook`"
    assert notebook.strip_outputs(target.read_text(encoding="utf-8")) == notebook.build(outline), (
        f"docs/notebooks/{target.name} is out of date with its outline or snippets: "
        "run `python -m tools.generate.notebook`"
    )


@pytest.mark.parametrize("outline", NOTEBOOKS, ids=[o.name for o in NOTEBOOKS])
def test_notebook_outputs_are_the_tested_outputs(outline):
    """The saved outputs come from executing the notebook (`python -m tools.generate.notebook`); each cell
    runs one snippet's code, so it must have printed that snippet's expected output, which the
    snippet tests prove by running the same code again."""
    target = NOTEBOOKS[outline]
    text = target.read_text(encoding="utf-8")
    printed = notebook.stdout(text)
    checker = doctest.OutputChecker()
    for name, got in printed.items():
        want = Snippet.load(find(name)).expected_output()
        assert checker.check_output(want, got, FLAGS), (
            f"docs/notebooks/{target.name}, cell of {name}: printed other output than the snippet "
            f"asserts (never executed, or stale): run `python -m tools.generate.notebook`\n"
            f"--- snippet ---\n{want}--- notebook ---\n{got}"
        )
    for cell in json.loads(text)["cells"]:
        for output in cell.get("outputs", []):
            assert output["output_type"] == "stream" and output["name"] == "stdout", (
                f"docs/notebooks/{target.name}, cell of {cell['metadata']['snippet']}: "
                f"a {output['output_type']} output ({output.get('name', '')}): an error, a warning "
                "or a displayed value the snippet does not show"
            )
