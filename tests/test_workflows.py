"""The GitHub Actions workflows: actions pinned by commit, least privilege, zizmor finds nothing."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.snippets import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ZIZMOR = Path(sys.executable).parent / "zizmor"


def test_there_are_workflows():
    names = {path.name for path in WORKFLOWS}
    assert names >= {"tests.yml", "docs.yml", "matrix.yml"}, names


def test_zizmor_reports_no_findings():
    result = subprocess.run(
        [str(ZIZMOR), "--offline", "--persona", "pedantic", "--no-progress", str(ROOT / ".github" / "workflows")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0 and "No findings" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_actions_are_pinned_by_commit(workflow):
    for line in workflow.read_text().splitlines():
        uses = re.search(r"uses:\s*(\S+)", line)
        if uses:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses[1]), (
                f"{workflow.name}: {uses[1]} is not pinned to a commit SHA"
            )
            assert re.search(r"#\s*v\d", line), f"{workflow.name}: say which release {uses[1]} is"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_permissions_are_declared_for_the_whole_workflow(workflow):
    assert re.search(r"^permissions:", workflow.read_text(), re.MULTILINE), (
        f"{workflow.name}: no top-level permissions: the token would get the repository default"
    )


def test_ci_runs_the_readme_test_command():
    assert re.search(r"run: \.ci/run$", (ROOT / ".github/workflows/tests.yml").read_text(), re.MULTILINE)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()


def test_the_deployed_site_is_built_from_the_whole_history():
    """Each page's last update and each Chinese page's translation status come from git log: a
    shallow clone (actions/checkout's default) would show one date everywhere and no page behind;
    tools/site/page_status.py then shows neither."""
    text = (ROOT / ".github/workflows/docs.yml").read_text()
    assert re.search(r"^\s+fetch-depth: 0\b", text, re.MULTILINE), "docs.yml: checkout needs fetch-depth: 0"
