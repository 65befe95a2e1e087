"""What the tests of the reader's checker share (tests/test_checker_*.py): check_guide.py as
tools/reader/checker.py writes it, loaded as a module, and a copy of it with one expected output
line changed; main() run in this process as `python check_guide.py` runs it, and the line it
prints for a page. Each test file imports the fixtures it uses."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest

from tools.reader import checker

BROKEN_PAGE = "index"              # one snippet; its copy gets one wrong expected line
BROKEN_LINE = "leaves: True True True"
CHANGED_LINE = "leaves: True True False"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("check_guide_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines; main() runs only as __main__
    return module


@pytest.fixture(scope="session")  # one for every test file that reads it
def generated(tmp_path_factory) -> Path:
    return checker.write(tmp_path_factory.mktemp("checker") / "check_guide.py")


@pytest.fixture(scope="session")
def module(generated):
    return _load(generated)


@pytest.fixture
def changed(generated, tmp_path):
    """A copy of the checker with one expected output line changed."""
    text = generated.read_text(encoding="utf-8")
    assert text.count(BROKEN_LINE + "\n") == 1, f"{BROKEN_LINE!r} must occur once in the checker"
    copy = tmp_path / "check_guide.py"
    copy.write_text(text.replace(BROKEN_LINE + "\n", CHANGED_LINE + "\n"), encoding="utf-8")
    return _load(copy)


def main_here(module, args: list[str], capsys) -> tuple[int, str]:
    """main() in this process (torch is imported already): it returns the status that
    `python check_guide.py` exits with. The snippets' modules of this process
    (tests/test_examples.py) and its environment are left as they were."""
    saved = {name: m for name, m in sys.modules.items() if name.startswith("snippets_")}
    environment = dict(os.environ)  # main() hides the GPUs from the examples
    # main() points tempfile and TMPDIR at a folder of its own and removes it at the end: right in
    # a reader's process, but here every thread of the suite would follow it, and the script runs
    # that started in it meanwhile had their working folders removed under them (torch's import
    # then stops with "Intel oneMKL FATAL ERROR: Cannot load .../libtorch_cpu.so.": MKL asks for the
    # working folder). Here the run keeps the suite's temporary folder; a run in a process of its
    # own checks the folder (tests/test_checker_run.py, the probe).
    own = module.own_temporary_folder
    module.own_temporary_folder = lambda: contextlib.nullcontext(tempfile.gettempdir())
    try:
        code = module.main(args)
    finally:
        module.own_temporary_folder = own
        for name in [n for n in sys.modules if n.startswith("snippets_")]:
            del sys.modules[name]
        sys.modules.update(saved)
        os.environ.clear()
        os.environ.update(environment)
    return code, capsys.readouterr().out


def line_of(stdout: str, page: str) -> str:
    found = [line for line in stdout.splitlines() if line.split(" ", 1)[0] == page]
    assert len(found) == 1, f"check_guide.py printed no line (or several) for {page}:\n{stdout}"
    return found[0]
