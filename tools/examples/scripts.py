"""Run script snippets (snippets/<folder>/<name>.py): alone, as a reader runs them, or the distributed
ones together from one process (tools/examples/distributed_runner.py)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.snippets.model import DISTRIBUTED_TIMEOUT, SCRIPT_TIMEOUT, rel


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float,
         what: str) -> "subprocess.CompletedProcess[str]":
    """Run command in a session of its own: on timeout every process it started (the workers of
    a distributed run too) is killed, and the result says which run it was."""
    process = subprocess.Popen(command, cwd=cwd, env=env, text=True, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        stdout, stderr = process.communicate()
        stderr += f"\n{what} did not finish in {timeout:.0f} s: killed, with every process it started"
        return subprocess.CompletedProcess(command, -9, stdout, stderr)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# The environment this process started with: a library imported by an earlier snippet may change
# os.environ for every process started after it (ultralytics sets TORCH_CPP_LOG_LEVEL=ERROR at import,
# which hid the DDP reducer's warning from the scripts a matrix pass recorded after a YOLO example).
_START_ENV = dict(os.environ)


def _script_env(cache: str) -> dict[str, str]:
    return {**_START_ENV, "TORCHINDUCTOR_CACHE_DIR": cache, "TORCHINDUCTOR_VEC_ISA_OK": "0"}


# Libraries installed apart, in a folder of the venv (requirements-deepspeed.txt says why), by the
# name a script imports: a script that imports one gets that folder on its PYTHONPATH, no other
# process does. Import name -> (folder, the make target that installs it).
APART = {"deepspeed": (Path(sys.prefix) / "deepspeed", "install-deepspeed")}


def apart_libraries(path: Path) -> list[str]:
    """The libraries of APART that the script imports."""
    text = path.read_text(encoding="utf-8")
    return [name for name in APART if re.search(rf"^(?:import|from) {name}\b", text, re.MULTILINE)]


def missing_apart(path: Path) -> str | None:
    """Why the script cannot run here, naming the make target, or None."""
    for name in apart_libraries(path):
        folder, target = APART[name]
        if not (folder / name).is_dir():
            return (f"{rel(path)} imports {name}, which is not installed in {folder.name}/ of the "
                    f"venv: run `make {target}` (`make test` installs it)")
    return None


def _with_apart(env: dict[str, str], path: Path) -> dict[str, str]:
    folders = [str(APART[name][0]) for name in apart_libraries(path)]
    if folders:
        env["PYTHONPATH"] = os.pathsep.join([*folders, *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_script(path: Path, timeout: float = SCRIPT_TIMEOUT) -> "subprocess.CompletedProcess[str]":
    """Run a script snippet as a reader runs a copy of it: `python <name>.py` in an empty folder
    (nothing beside it to read), with a fresh inductor cache. So its result is also the copy
    button's (tests/test_browser.py uses it for a copy equal to the file).

    TORCHINDUCTOR_VEC_ISA_OK=0 skips inductor's probe of the CPU's vector instruction sets
    (test programs compiled with g++ on every fresh cache): it changes the speed of the generated
    code, not its results, and saves the suite more than ten seconds.
    """
    with tempfile.TemporaryDirectory(prefix="guide-script-") as folder:
        work, cache = Path(folder) / "work", Path(folder) / "inductor"
        work.mkdir()
        shutil.copyfile(path, work / path.name)
        return _run([sys.executable, path.name], work, _with_apart(_script_env(str(cache)), path),
                    timeout, rel(path))


def run_distributed(paths: list[Path], timeout: float = SCRIPT_TIMEOUT, cwd: Path | None = None
                    ) -> "dict[Path, subprocess.CompletedProcess[str]]":
    """Run several distributed script snippets from ONE process (tools/examples/distributed_runner.py),
    which imports torch once and forks each script's two workers from there: a script run on its
    own costs a torch import in each of its processes. Each script gets DISTRIBUTED_TIMEOUT
    seconds (at most `timeout`). Returns, per script, what its own run would return: rank 0's
    output then rank 1's, and a non-zero code if either rank raised or the script was killed.
    The runner works in `cwd` (default: an empty folder, as a reader's copy runs); its temporary
    folder is each result's args[2]."""
    with tempfile.TemporaryDirectory(prefix="guide-distributed-") as folder:
        if cwd is None:
            cwd = Path(folder) / "work"
            cwd.mkdir()
        names = ", ".join(p.name for p in paths)
        runner = Path(__file__).with_name("distributed_runner.py")
        each = min(DISTRIBUTED_TIMEOUT, timeout)
        env = _script_env(folder)
        for path in paths:  # the runner imports every script: the APART folders they need
            # (tests/test_scripts.py runs the scripts that import one apart from the others)
            env = _with_apart(env, path)
        run = _run([sys.executable, str(runner), folder, str(each), *map(str, paths)],
                   cwd, env, each * len(paths) + 60,
                   f"the shared two-process run of {names} (tools/examples/distributed_runner.py)")
        results = {}
        for path in paths:
            files = {f.name: f.read_text(encoding="utf-8", errors="replace")
                     for f in Path(folder).glob(f"{path.stem}.*")}
            codes = [files.get(f"{path.stem}.rank{rank}.code") for rank in (0, 1)]
            if None in codes:  # the run died or was killed before this script ended
                results[path] = subprocess.CompletedProcess(run.args, run.returncode or -1, "",
                                                           f"{rel(path)}: {run.stderr}")
                continue
            stdout = "".join(files.get(f"{path.stem}.rank{r}.stdout", "") for r in (0, 1))
            stderr = "".join(files.get(f"{path.stem}.rank{r}.stderr", "") for r in (0, 1))
            code = max(int(c) for c in codes)
            results[path] = subprocess.CompletedProcess(run.args, code, stdout, stderr)
        return results


def script_output(result: "subprocess.CompletedProcess[str]") -> str:
    """A script's stdout as <name>.out stores it: trailing spaces dropped, one newline per line."""
    return "".join(line.rstrip() + "\n" for line in result.stdout.splitlines())
