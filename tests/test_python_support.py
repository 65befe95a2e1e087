"""The supported Pythons are written once, as requires-python in pyproject.toml, and everything
else agrees with it: the README, the check `make install` runs before it creates .venv
(tools/dev/check_python.py), and the nox session on the newest Python allowed."""

import ast
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib

import pytest

from tools.dev import check_python
from tools.snippets import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SPEC = PYPROJECT["project"]["requires-python"]
OLDEST = re.search(r">=\s*(\d+\.\d+\.\d+)", SPEC).group(1)
NEWEST = check_python.newest_minor(SPEC)  # "3.13" for "<3.14"
EXCLUDED = re.findall(r"!=\s*([\d.]+)", SPEC)  # releases inside the range that are not supported
SCRIPT = ROOT / "tools" / "dev" / "check_python.py"


def _check(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=30)


def test_the_check_reads_the_range_of_pyproject():
    assert check_python.requires_python() == SPEC  # its regex finds what tomllib finds


def test_the_readme_states_the_range():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    but = f" (but not {', '.join(EXCLUDED)})" if EXCLUDED else ""
    assert f"On a fresh machine with Python {OLDEST}–{NEWEST}{but} and `make`" in readme


@pytest.mark.parametrize("version, supported", [
    ("3.10.13", False), ("3.11.2", False), ("3.11.4", False), ("3.11.5", True), ("3.11.7", True),
    ("3.12.1", True), ("3.13.0", True), ("3.13.1", True), ("3.13.9", True), ("3.14.0", False),
    ("3.14.0a1", False),
])
def test_the_check_accepts_exactly_the_range(version, supported):
    result = _check("--version-string", version)
    assert (result.returncode == 0) is supported, result.stderr
    if supported:
        assert result.stdout == result.stderr == ""
    else:
        # One line that names the version found, the range needed and how to pick another.
        assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert f"Python {version}," in result.stderr and f"Python {SPEC} " in result.stderr
        assert f"make install PYTHON=python{NEWEST}" in result.stderr


def test_the_check_parses_on_old_pythons():
    """It runs on the reader's Python, whatever that is, so it must get as far as saying so."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"), feature_version=(3, 6))
    newer = [type(node).__name__ for node in ast.walk(tree)
             if isinstance(node, (ast.JoinedStr, ast.AnnAssign)) or getattr(node, "returns", None)]
    assert not newer, newer


def _fake_python(folder, version):
    """An interpreter that reports `version`: this one, with sys.version_info replaced at start."""
    site = folder / "site"
    site.mkdir(parents=True)
    info = tuple(int(n) for n in version.split(".")) + ("final", 0)
    (site / "sitecustomize.py").write_text(f"import sys\nsys.version_info = {info}\n")
    fake = folder / "python"
    fake.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    return fake


@pytest.fixture
def project(tmp_path):
    """A copy of what `make install` reads before it installs anything."""
    for name in ("Makefile", "pyproject.toml", "requirements.txt", "requirements-site.txt", "requirements-installer.txt",
                 "tools/dev/check_python.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _make_install(project, python):
    started = time.monotonic()
    # as a reader's shell runs it: under `make test` the variables of the outer make would turn
    # make's own closing line into "make[1]: ***"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    result = subprocess.run(["make", "-s", "install", f"PYTHON={python}"], cwd=project,
                            capture_output=True, text=True, timeout=60, env=env)
    return result, time.monotonic() - started


def _own_lines(result):
    return [line for line in result.stderr.splitlines() if not line.startswith("make: ***")]


def test_make_install_stops_on_an_unsupported_python_in_one_line(project, tmp_path_factory):
    python = _fake_python(tmp_path_factory.mktemp("py"), "3.11.2")
    result, seconds = _make_install(project, python)
    assert result.returncode != 0 and seconds < 10
    assert _own_lines(result) == [
        f"{python} is Python 3.11.2, but the guide needs Python {SPEC} (requires-python in "
        f"pyproject.toml): pick another, e.g. make install PYTHON=python{NEWEST}"]
    assert not (project / ".venv").exists()  # nothing half-installed


def test_make_install_names_a_python_that_does_not_run(project):
    result, _ = _make_install(project, project / "no-such-python")
    assert result.returncode != 0
    [line] = _own_lines(result)
    assert line.startswith(f"{project / 'no-such-python'} does not run here (")
    assert f"needs Python {SPEC} (requires-python in pyproject.toml)" in line
    assert not (project / ".venv").exists()


def test_make_install_names_the_python_an_existing_venv_was_made_with(project):
    bin_ = project / ".venv" / "bin"
    bin_.mkdir(parents=True)
    _fake_python(project / "fake", "3.11.2").rename(bin_ / "python")
    result, _ = _make_install(project, sys.executable)
    assert result.returncode != 0
    assert _own_lines(result) == [
        f".venv was made with Python 3.11.2, but the guide needs Python {SPEC} (requires-python in "
        f"pyproject.toml): rm -rf .venv, then make install PYTHON=python{NEWEST}"]


def test_the_newest_python_has_its_nox_session_and_make_target():
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    session = "doctests_py" + NEWEST.replace(".", "")
    assert f'@nox.session(python="{NEWEST}")\ndef {session}(' in noxfile
    assert f"$(BIN)/nox -s {session} " in (ROOT / "Makefile").read_text(encoding="utf-8")
