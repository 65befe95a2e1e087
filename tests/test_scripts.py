"""Script snippets (snippets/<folder>/<name>.py): run each one and compare its stdout with <name>.out.

They run in a subprocess with a time limit; conftest.py starts them right after collection so
that they overlap with the rest of the suite.
"""

import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tools.examples.evaluate import release_script_problems
from tools.examples.scripts import apart_libraries, missing_apart, run_distributed, run_script, script_output
from tools.snippets import (
    DISTRIBUTED_MAIN, ROOT, SNIPPETS, is_distributed, releases, script_paths, torch_release, version_gates,
)
from tools.snippets import rel as rel_path

SCRIPTS = script_paths()
DISTRIBUTED = [path for path in SCRIPTS if is_distributed(path)]
GATES = version_gates()
RELEASE = torch_release()
VERSION = __import__("torch").__version__.split("+")[0]
_RUNS: dict = {}
HANGING_LIMIT = 8  # seconds; long enough for both workers to start on a busy machine
# Runs at once (a distributed group is one run). All of them at once took 86 CPU-s, two at a time
# 73 (each imports torch; together they only slowed each other): the suite keeps both cores busy
# anyway, so the CPU saved is wall time saved.
SCRIPT_WORKERS = 2


def start_scripts(selected_ids=None) -> None:
    """Start the scripts the selected tests need (all of them when `selected_ids` is None), and
    the hanging run if its test is selected."""
    if _RUNS or not SCRIPTS:
        return
    def wanted(key: str) -> bool:
        return selected_ids is None or any(key in nodeid for nodeid in selected_ids)
    scripts = [p for p in SCRIPTS if wanted(p.relative_to(ROOT).as_posix())]
    pool = ThreadPoolExecutor(max_workers=SCRIPT_WORKERS)
    for path in scripts:
        if path not in DISTRIBUTED:
            _RUNS[path] = pool.submit(run_script, path)
    # One pair of processes runs them one after another, a pair per set of APART libraries they
    # import (DeepSpeed's folder stays off the others' path); the pairs run side by side.
    groups: dict[tuple, list] = {}
    for path in (p for p in scripts if p in DISTRIBUTED):
        groups.setdefault(tuple(apart_libraries(path)), []).append(path)
    for distributed in groups.values():
        shared = pool.submit(run_distributed, distributed)
        for path in distributed:
            _RUNS[path] = pool.submit(lambda path=path, shared=shared: shared.result()[path])
    if wanted("test_a_hanging_distributed_run_is_killed_naming_it"):
        # the run that hangs until its time limit: it mostly waits, so it waits alongside the rest
        _start_hanging(pool)
    pool.shutdown(wait=False)


def _start_hanging(pool: ThreadPoolExecutor) -> None:
    folder = Path(tempfile.mkdtemp(prefix="guide-hanging-"))
    script = folder / "hangs_forever.py"
    script.write_text(HANGING, encoding="utf-8")
    _RUNS["hanging"] = (folder, pool.submit(run_distributed, [script], HANGING_LIMIT, folder))


def _params():
    """One test per script; outside its gate (snippets/versions.toml) it is compared with what it
    printed in a real run of this release (<folder>/releases/<name>.md)."""
    for path in SCRIPTS:
        rel = path.relative_to(ROOT).as_posix()
        gate = GATES.get(path.stem)
        if gate is not None and gate.excludes(RELEASE):
            if gate.warns:
                raise ValueError(f"snippets/versions.toml [{path.stem}]: `warns` is for doctests only")
            yield pytest.param(path, id=f"{rel} (differs on torch {VERSION}: {rel_path(releases.path(path.stem))})")
        else:
            yield pytest.param(path, id=rel)


def script_result(path: Path) -> "subprocess.CompletedProcess[str]":
    """This session's run of a script snippet (tests/test_browser.py reads it for a copy equal to
    the file); one not started with the others runs now."""
    start_scripts()
    if path not in _RUNS:
        return run_distributed([path])[path] if path in DISTRIBUTED else run_script(path)
    return _RUNS[path].result()


def as_a_copy_ran(path: Path) -> dict:
    """That run as tests/run_copied.py reports a copy's run (tests/test_browser.py)."""
    result = script_result(path)
    return {"ok": result.returncode == 0, "stdout": script_output(result), "error": result.stderr[-3000:]}


@pytest.mark.parametrize("path", list(_params()))
def test_script_prints_its_expected_output(path):
    result = script_result(path)
    rel = path.relative_to(ROOT).as_posix()
    gate = GATES.get(path.stem)
    if gate is not None and gate.excludes(RELEASE):
        problem = release_script_problems(path, VERSION, result)
        assert problem is None, problem
        return
    if result.returncode != 0 and missing_apart(path):
        pytest.fail(missing_apart(path), pytrace=False)
    assert result.returncode == 0, f"{rel} exited with {result.returncode}:\n{result.stderr}"
    expected = path.with_suffix(".out")
    assert expected.is_file(), f"{rel} has no {expected.name}: run `make outputs`"
    printed = script_output(result)
    assert printed == expected.read_text(encoding="utf-8"), (
        f"{rel} printed something other than {expected.name}:\n"
        f"--- expected ---\n{expected.read_text(encoding='utf-8')}--- printed ---\n{printed}"
    )


def test_every_output_file_has_its_script():
    orphans = [rel_path(p) for p in SNIPPETS.rglob("*.out") if not p.with_suffix(".py").exists()]
    assert not orphans, f"output files without a script: {orphans}"


@pytest.mark.parametrize("path", DISTRIBUTED, ids=[p.name for p in DISTRIBUTED])
def test_a_distributed_script_ends_with_the_standard_launch(path):
    """The suite forks each distributed script's workers from one shared process
    (tools/examples/distributed_runner.py); that is what `python <name>.py` runs only if the script's
    launch is the standard one, byte for byte."""
    assert path.read_text(encoding="utf-8").endswith(DISTRIBUTED_MAIN), (
        f"{rel_path(path)} must end with tools.snippets.DISTRIBUTED_MAIN (free_port and the "
        "`__main__` block), as snippets/ddp/ddp_intermediate_grads.py does"
    )


HANGING = '''"""Rank 1 never joins the barrier: the run hangs until it is killed."""
import datetime
import os
import socket
import sys
import time

import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    with open(f"pid{rank}", "w") as f:
        f.write(str(os.getpid()))
    print("started", flush=True)
    if rank == 1:
        time.sleep(600)
    dist.barrier()
''' + DISTRIBUTED_MAIN


def test_a_hanging_distributed_run_is_killed_naming_it():
    """A distributed run that hangs is killed at its time limit, with every process it started,
    and fails naming the run; its temporary folder is removed. (Started with the other scripts.)"""
    start_scripts()
    folder, future = _RUNS["hanging"]
    try:
        result = future.result()[folder / "hangs_forever.py"]
        assert result.returncode != 0
        assert "hangs_forever.py" in result.stderr and f"did not finish in {HANGING_LIMIT} s" in result.stderr, (
            result.stderr)
        pids = [int((folder / f"pid{rank}").read_text()) for rank in (0, 1)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    time.sleep(0.5)
    for pid in pids:
        try:  # gone, or dead and waiting for init to reap it (state Z)
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        assert state == "Z", f"worker process {pid} of the killed run is still running (state {state})"
    assert not Path(result.args[2]).exists(), f"the run's temporary folder {result.args[2]} was left"


def test_a_script_whose_library_is_installed_apart_fails_naming_its_target(monkeypatch, tmp_path):
    """A script that imports a library installed apart (tools/examples/scripts.py, APART) and finds
    it missing fails naming the make target that installs it."""
    from tools.examples import scripts

    script = SNIPPETS / "deepspeed" / "deepspeed_zero_grads.py"
    assert scripts.apart_libraries(script) == ["deepspeed"]
    monkeypatch.setitem(scripts.APART, "deepspeed", (tmp_path / "deepspeed", "install-deepspeed"))
    message = scripts.missing_apart(script)
    assert message is not None and "snippets/deepspeed/deepspeed_zero_grads.py imports deepspeed" in message
    assert "run `make install-deepspeed`" in message
