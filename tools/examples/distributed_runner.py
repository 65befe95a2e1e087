"""The tests' shared run of the distributed script snippets: one process imports torch and every
script once, then forks a pair of processes per script that runs its `worker(rank, world_size,
port)`, as `python <name>.py` does (tests/test_scripts.py checks that each script ends with that
standard launch). The forked workers start with everything imported: no torch import per process.

    python tools/examples/distributed_runner.py FOLDER SECONDS SCRIPT.py [SCRIPT.py ...]   (from snippets/)

SECONDS: each script's time limit; a script that hangs has its two processes killed and fails,
and the next one runs. A script whose imports fail on the installed torch fails alone.

Each rank writes, per script, what it printed at the file-descriptor level (C++ libraries such as
Gloo print there too) to FOLDER/<name>.rank<N>.stdout and .stderr, then FOLDER/<name>.rank<N>.code
(0, or 1 with the traceback in .stderr). tools.snippets.run_distributed reads them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
import traceback
from pathlib import Path

import torch.multiprocessing as mp

WORLD_SIZE = 2


@contextlib.contextmanager
def _captured(stdout: Path, stderr: Path):
    sys.stdout.flush(), sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with stdout.open("w") as out, stderr.open("w") as err:
        os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])


def leave_the_group_on_old_torch() -> None:
    """Before torch 2.8, destroy_process_group() can hang both ranks after they printed everything:
    the Gloo group's destructor holds the GIL while it joins its worker threads, and a worker still
    freeing a finished collective's tensors waits for the GIL (seen with py-spy on 2.5.1 and
    2.7.1: 1 and 2 of the 23 two-process scripts in two checker runs on 2.7.1). pytorch#154976
    releases the GIL there; 2.8.0's libtorch_python.so is the first tracked one with it. A forked
    rank ends with os._exit, which frees nothing, so on those releases the runner leaves the group
    to it; the scripts' output is the same. The reader's checker does the same (tools/reader/runtime_run.py)."""
    import re

    import torch
    import torch.distributed as dist

    if tuple(int(part) for part in re.findall(r"\d+", torch.__version__)[:2]) < (2, 8):
        dist.destroy_process_group = lambda group=None: None


def run_one(rank: int, folder: str, name: str, module, port: int) -> None:
    base = f"{folder}/{name}.rank{rank}"
    code = 0
    leave_the_group_on_old_torch()  # forked: this process ends with os._exit
    with _captured(Path(base + ".stdout"), Path(base + ".stderr")):
        try:
            module.worker(rank, WORLD_SIZE, port)
        except BaseException:
            traceback.print_exc()
            code = 1
    Path(base + ".code").write_text(str(code))


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not as __main__: defines worker and free_port only
    return module


def _failed(folder: str, name: str, message: str) -> None:
    """What a script that could not run leaves: code 1 on both ranks, the reason in rank 0's stderr."""
    for rank in range(WORLD_SIZE):
        base = f"{folder}/{name}.rank{rank}"
        Path(base + ".stderr").write_text(message if rank == 0 else "")
        Path(base + ".code").write_text("1")


def run(folder: str, name: str, path: Path, timeout: float) -> None:
    """One script: import it, fork its pair, wait at most `timeout` seconds for both."""
    try:
        module = load(path)
    except Exception:  # an import the installed torch lacks: this script fails, the others run
        _failed(folder, name, traceback.format_exc())
        return
    context = mp.start_processes(run_one, args=(folder, name, module, module.free_port()),
                                 nprocs=WORLD_SIZE, join=False, start_method="fork")
    deadline = time.monotonic() + timeout
    try:
        while not context.join(timeout=max(0.0, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                _failed(folder, name, f"{name}.py did not finish in {timeout:.0f} s: "
                        "its two processes were killed")
                return
    except Exception:  # a worker died without writing its result (killed, crashed)
        _failed(folder, name, traceback.format_exc())
    finally:
        for process in context.processes:  # none is left behind, whatever happened
            if process.is_alive():
                process.kill()
            process.join()


def warm() -> None:
    """Import here what torch imports lazily inside a worker: DDP's constructor and FSDP import
    torch._dynamo, and with it sympy and more (900 modules, 1.3 s of CPU a process, measured on a
    DDP script's worker). Imported once before forking, every pair inherits them; before, only the
    pairs forked after a script that imports torch._dynamo itself did (the scripts' test: 41 s of
    CPU, now 37.5 s)."""
    import torch._dynamo  # noqa: F401
    import torch.distributed.fsdp  # noqa: F401
    import torch.nn.parallel  # noqa: F401


if __name__ == "__main__":
    folder, timeout, *paths = sys.argv[1:]
    warm()
    for path in map(Path, paths):  # a fresh pair of processes per script, forked from this one
        run(folder, path.stem, path, float(timeout))
