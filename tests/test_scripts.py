"""Script snippets (snippets/<name>.py): run each one and compare its stdout with <name>.out.

They run in a subprocess with a time limit; conftest.py starts them right after collection so
that they overlap with the rest of the suite.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from tools.snippets import ROOT, run_script, script_output, script_paths, torch_release, version_gates

SCRIPTS = script_paths()
GATES = version_gates()
RELEASE = torch_release()
_RUNS: dict = {}


def start_scripts() -> None:
    if _RUNS or not SCRIPTS:
        return
    pool = ThreadPoolExecutor(max_workers=len(SCRIPTS))
    for path in SCRIPTS:
        _RUNS[path] = pool.submit(run_script, path)
    pool.shutdown(wait=False)


def _params():
    """One test per script; outside its gate (snippets/versions.toml) one that must fail."""
    for path in SCRIPTS:
        rel = path.relative_to(ROOT).as_posix()
        gate = GATES.get(path.stem)
        if gate is not None and gate.excludes(RELEASE):
            if gate.warns:
                raise ValueError(f"snippets/versions.toml [{path.stem}]: `warns` is for doctests only")
            yield pytest.param(path, id=f"{rel} ({gate.label})",
                               marks=pytest.mark.xfail(strict=True, reason=f"{gate.label}: {gate.why}"))
        else:
            yield pytest.param(path, id=rel)


@pytest.mark.parametrize("path", list(_params()))
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
