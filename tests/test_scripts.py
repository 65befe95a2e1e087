"""Script snippets (snippets/<name>.py): run each one and compare its stdout with <name>.out.

They run in a subprocess with a time limit; conftest.py starts them right after collection so
that they overlap with the rest of the suite.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from tools.snippets import ROOT, run_script, script_output, script_paths

SCRIPTS = script_paths()
_RUNS: dict = {}


def start_scripts() -> None:
    if _RUNS or not SCRIPTS:
        return
    pool = ThreadPoolExecutor(max_workers=len(SCRIPTS))
    for path in SCRIPTS:
        _RUNS[path] = pool.submit(run_script, path)
    pool.shutdown(wait=False)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.relative_to(ROOT).as_posix() for p in SCRIPTS])
def test_script_prints_its_expected_output(path):
    start_scripts()
    result = _RUNS[path].result()
    rel = path.relative_to(ROOT).as_posix()
    assert result.returncode == 0, f"{rel} exited with {result.returncode}:\n{result.stderr}"
    expected = path.with_suffix(".out")
    assert expected.is_file(), f"{rel} has no {expected.name}: run `make outputs`"
    printed = script_output(result)
    assert printed == expected.read_text(encoding="utf-8"), (
        f"{rel} printed something other than {expected.name}:\n"
        f"--- expected ---\n{expected.read_text(encoding='utf-8')}--- printed ---\n{printed}"
    )


def test_every_output_file_has_its_script():
    orphans = [p.name for p in (ROOT / "snippets").glob("*.out") if not p.with_suffix(".py").exists()]
    assert not orphans, f"output files without a script: {orphans}"
