"""The one list of torch releases (pyproject.toml, [tool.guide.torch]) and the files that cannot read it."""

import re

import yaml

from tools.snippets import ROOT
from tools.snippets.torch_releases import PINNED, TORCHVISION, TRACKED, key, read


def _pin(name: str, package: str) -> str:
    found = re.findall(rf"^{re.escape(package)}==(\S+)", (ROOT / name).read_text(), re.MULTILINE)
    assert len(found) == 1, f"{name}: expected one pin of {package}, found {found}"
    return found[0]


def test_requirements_pin_the_listed_release():
    assert _pin("requirements.txt", "torch") == PINNED, (
        f"requirements.txt pins torch {_pin('requirements.txt', 'torch')}, but pyproject.toml's "
        f"[tool.guide.torch] pinned is {PINNED}: `make upgrade TORCH=X.Y.Z` moves both")


def test_requirements_pin_the_torchvision_built_for_it():
    assert _pin("requirements-models.txt", "torchvision") == TORCHVISION[PINNED], (
        f"requirements-models.txt pins torchvision {_pin('requirements-models.txt', 'torchvision')}, "
        f"but pyproject.toml lists {TORCHVISION[PINNED]} for torch {PINNED}")


def test_prose_beside_the_pins_names_the_pin():
    """The comments in the requirements files name the pinned release too."""
    for name in ("requirements.txt", "requirements-models.txt"):
        for number in re.findall(r"torch (\d+\.\d+\.\d+)", (ROOT / name).read_text()):
            assert number == PINNED, f"{name}: a comment names torch {number}, the pin is {PINNED}"


def test_columns_are_the_pin_then_newest_to_oldest():
    assert TRACKED[0] == PINNED
    assert TRACKED[1:] == sorted(TRACKED[1:], key=key, reverse=True)


def test_the_pin_must_be_tracked(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.guide.torch]\npinned = "9.9.9"\n[tool.guide.torch.torchvision]\n"2.4.1" = "0.19.1"\n')
    try:
        read(path)
    except ValueError as error:
        assert "9.9.9" in str(error)
    else:
        raise AssertionError("a pin outside the tracked releases was accepted")


def test_the_matrix_workflow_reads_the_list():
    workflow = yaml.safe_load((ROOT / ".github/workflows/matrix.yml").read_text())
    step = workflow["jobs"]["releases"]["steps"][-1]["run"]
    assert "tools.snippets.torch_releases --json" in step
    assert workflow["jobs"]["doctests"]["strategy"]["matrix"]["torch"] == "${{ fromJSON(needs.releases.outputs.torch) }}"
    assert not re.search(r"\d+\.\d+\.\d+", yaml.safe_dump(workflow["jobs"]["doctests"]["strategy"]))

