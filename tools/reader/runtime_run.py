# check_guide.py, its part on running the examples: the doctest snippets in this process, the
# scripts in processes of their own, the distributed scripts' two workers. tools/reader/checker.py
# joins the parts (its PARTS, in order) into that one file and leaves out this preamble: the names
# the part takes from the parts before it (runtime_head.py, runtime_compare.py), for reading and
# linting it on its own.
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import contextlib
    import difflib
    import doctest
    import importlib.util
    import os
    import re
    import subprocess
    import sys
    import tempfile
    import time
    import warnings

    from tools.reader.runtime_compare import (
        CHECKER, FENCE, FLAGS, NO_NUMPY, NOT_RUN, Result, _indent, _installed, _missing_from, _noun,
        _settle, _torch, apply_warning_filters, exception_line, gate_excludes, gate_warns, missing_libraries,
        module_globals, reader_traceback, recording, run_as_script, script_output,
    )
    from tools.reader.runtime_fresh import as_in_a_new_process
    from tools.reader.runtime_head import DISTRIBUTED_TIMEOUT, GATES, SCRIPT_TIMEOUT, SNIPPETS, WARNING_FILTERS
# --- end of the preamble: check_guide.py goes on below ---


# --- Running the doctest snippets, in this process -------------------------------------------

def run_doctest(name: str, snippet: dict, current: tuple[int, int]) -> Result:
    """A transcript's examples, one after another in one namespace, up to the first that differs:
    the ones after it build on it. On a release its gate excludes, the guide's recording of that
    release is run instead: the same code, which may end with an exception it recorded."""
    parser = doctest.DocTestParser()
    examples = parser.get_examples(FENCE.search(snippet["text"])["body"], name)
    result = Result(name, len(examples))
    missing = missing_libraries(snippet["needs"])
    if missing:
        result.status, result.why = NOT_RUN, ", ".join(missing)
        return result
    gate = GATES.get(name)
    excluded = gate is not None and gate_excludes(gate, current)
    recorded = recording(gate, current) if excluded and not gate_warns(gate, current) else None
    expected, against = examples, ""
    if recorded is not None:
        expected = parser.get_examples(recorded["body"], name) if recorded["kind"] == "pycon" else []
        against = f", against the output the guide recorded on torch {', '.join(recorded['releases'])}"
        if not expected or [e.source for e in expected] != [e.source for e in examples[: len(expected)]]:
            result.diffs.append(f"The guide's recording for {_torch(current)} is not of this example's code.\n")
            _settle(result, gate, excluded, recorded, current)
            return result
    as_in_a_new_process()  # what earlier examples compiled, logged, set: forgotten
    namespace = module_globals(f"snippets/{name}.md")
    sources: dict = {}
    with warnings.catch_warnings():
        if recorded is not None:  # as the guide recorded it: stdout only, warnings go to stderr
            warnings.simplefilter("ignore")
        else:
            apply_warning_filters(WARNING_FILTERS)
        if gate_warns(gate, current):  # the same output, and a warning torch raises there
            warnings.filterwarnings("ignore", message=".*" + re.escape(gate["warns"]))
        for number, example in enumerate(expected, 1):
            filename = f"{name}, example {number}"
            sources[filename] = example.source
            where = f"example {number} of {len(examples)}{against}:\n{_source(example)}"
            try:
                printed = run_as_script(example.source, namespace, filename)
            except Exception as error:
                library = _missing_from(error)
                if library:
                    result.status, result.why = NOT_RUN, library
                    return result
                raised = exception_line(error)
                if example.exc_msg is not None and CHECKER.check_output(example.exc_msg, raised, FLAGS):
                    result.matched += 1  # as expected (a recording ends with it)
                    continue
                difference = "raised:\n" + _indent(reader_traceback(error, sources))
            else:
                if example.exc_msg is None and CHECKER.check_output(example.want, printed, FLAGS):
                    result.matched += 1
                    continue
                difference = CHECKER.output_difference(example, printed, FLAGS)
                if example.exc_msg is not None:
                    difference = "raised nothing; " + difference
            left = len(expected) - number
            result.diffs.append(where + difference + (
                f"(not run: the {_noun(left, 'example')} after it, which build on it)\n" if left else ""))
            break
    _settle(result, gate, excluded, recorded, current)
    return result


def _source(example: doctest.Example) -> str:
    return "".join(("    >>> " if i == 0 else "    ... ") + line + "\n"
                   for i, line in enumerate(example.source.rstrip("\n").split("\n")))


# --- Running the script snippets, each in processes of its own ---------------------------------

TEMPORARY = ("TMPDIR", "TEMP", "TMP")  # where Python (tempfile) and C libraries put temporary files


_ENVIRONMENT: dict = {}  # os.environ as it was before the first page ran (keep_environment)


def keep_environment() -> None:
    """The scripts' processes start from the environment the checker had before any page ran, as
    `python <name>.py` in a new shell does: a library an earlier page imported may have changed
    os.environ (`import ultralytics` sets TORCH_CPP_LOG_LEVEL=ERROR, which hid the DDP reducer's
    C++ warning from a later page's script)."""
    _ENVIRONMENT.clear()
    _ENVIRONMENT.update(os.environ)


def _script_env(folder: str) -> dict:
    # a fresh inductor cache, as a first run has; skipping inductor's CPU probe changes the
    # speed of the generated code, not its results (the guide's tests do the same). Temporary
    # files (torch writes some: _remote_module_non_scriptable.py) go into the run's folder.
    temporary = os.path.join(folder, "tmp")
    os.makedirs(temporary, exist_ok=True)
    return {**(_ENVIRONMENT or os.environ), **dict.fromkeys(TEMPORARY, temporary),
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(folder, "inductor"), "TORCHINDUCTOR_VEC_ISA_OK": "0"}


def _run(command: list[str], cwd: str, env: dict, timeout: float) -> tuple[int, str, str]:
    """Run a command; past its time limit, kill it with every process it started."""
    options = {"start_new_session": True} if os.name == "posix" else {
        "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, encoding="utf-8",
                               errors="replace", **options)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            if os.name == "posix":
                os.killpg(process.pid, 9)
            else:
                process.kill()
        stdout, stderr = process.communicate()
        return -9, stdout, stderr + f"\ndid not finish in {timeout:.0f} s: killed"
    return process.returncode, stdout, stderr


def run_scripts(names: list[str], current: tuple[int, int], verbose: bool) -> dict[str, Result]:
    """The page's scripts: each as `python <name>.py` in an empty folder; the distributed ones
    from one process of this file, which starts each one's two workers and keeps what each
    rank printed apart (rank 0's output, then rank 1's)."""
    results: dict[str, Result] = {}
    runnable = []
    for name in names:
        results[name] = Result(name, 1)
        missing = missing_libraries(SNIPPETS[name]["needs"])
        if missing:
            results[name].status, results[name].why = NOT_RUN, ", ".join(missing)
        else:
            runnable.append(name)
    with tempfile.TemporaryDirectory(prefix="check-guide-") as folder:
        for name in runnable:
            with open(os.path.join(folder, name + ".py"), "w", encoding="utf-8") as file:
                file.write(SNIPPETS[name]["source"])
        outputs: dict[str, tuple[int, str, str]] = {}
        for name in [n for n in runnable if SNIPPETS[n]["kind"] == "script"]:
            outputs[name] = _run([sys.executable, name + ".py"], folder, _script_env(folder), SCRIPT_TIMEOUT)
        distributed = [n for n in runnable if SNIPPETS[n]["kind"] == "distributed"]
        if distributed:
            code, out, err = _run([sys.executable, os.path.abspath(__file__), "--run-distributed", folder,
                                   *distributed], folder, _script_env(folder),
                                  DISTRIBUTED_TIMEOUT * len(distributed) + 60)
            for name in distributed:
                outputs[name] = _read_ranks(folder, name, f"{out}{err}\n(exit status {code})")
    for name, (code, stdout, stderr) in outputs.items():
        if verbose and stderr.strip():
            print(f"--- {name}.py, stderr ---\n{stderr.rstrip()}", file=sys.stderr)
        _script_result(results[name], code, stdout, stderr, current)
    return results


def _script_result(result: Result, code: int, stdout: str, stderr: str, current: tuple[int, int]) -> None:
    """A script's run against the page's output; on a release its gate excludes, against what
    the guide recorded there: its stdout, then "[failed] <exception>" if it failed."""
    if code != 0 and NO_NUMPY in stderr and not _installed("numpy"):
        result.status, result.why = NOT_RUN, "numpy"
        return
    absent = re.findall(r"ModuleNotFoundError: No module named '(\w+)", stderr) if code != 0 else []
    if absent and not _installed(absent[-1]):  # torch itself needs it there (setuptools, for inductor on 2.9)
        result.status, result.why = NOT_RUN, absent[-1]
        return
    gate = GATES.get(result.name)
    excluded = gate is not None and gate_excludes(gate, current)
    recorded = recording(gate, current) if excluded else None
    printed = script_output(stdout)
    if recorded is not None:
        expected, got = recorded["body"], script_body(printed, code, stderr)
        same = recorded["kind"] == "text" and got == expected
        names = (f"recorded on torch {', '.join(recorded['releases'])}", f"printed on {_torch(current)}")
    else:
        expected, got, same = SNIPPETS[result.name]["output"], printed, code == 0 and printed == SNIPPETS[result.name]["output"]
        names = ("the page's output", f"printed on {_torch(current)}")
    if same:
        result.matched = 1
    else:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), *names))
        failed = "" if code == 0 else (f"It exited with status {code}; the end of its stderr:\n"
                                       + _indent(stderr.strip()[-3000:] or "(nothing)"))
        result.diffs.append((diff or "(the same output)\n") + failed)
    _settle(result, gate, excluded, recorded, current)


def script_body(stdout: str, code: int, stderr: str) -> str:
    """A script's output as the guide records it on another release (tools/snippets/releases.py)."""
    return stdout if code == 0 else stdout + f"[failed] {last_exception(stderr)}\n"


def last_exception(stderr: str) -> str:
    """The last line of the last traceback in stderr ("AttributeError: ..."), or its last line."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Interrupt|Exit)\b", line)]
    last = (errors or lines or ["(nothing on stderr)"])[-1]
    return re.sub(r"(?<![\w.])/[^\s'\"]*/site-packages/", "...", last)[:300]  # not this machine's paths


def _read_ranks(folder: str, name: str, log: str) -> tuple[int, str, str]:
    def read(suffix: str) -> str | None:
        path = os.path.join(folder, f"{name}.{suffix}")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()

    codes = [read(f"rank{rank}.code") for rank in (0, 1)]
    if None in codes:  # the run died, or was killed, before this script ended
        return -1, "", log
    stdout = "".join(read(f"rank{rank}.stdout") or "" for rank in (0, 1))
    stderr = "".join(read(f"rank{rank}.stderr") or "" for rank in (0, 1))
    return max(int(c) for c in codes), stdout, stderr


# The distributed scripts' two workers, as the guide's tests run them: each rank's output is
# captured at the file-descriptor level (the Gloo library prints there too), one file per rank.

_LOADED: dict = {}


def _load(path: str):
    if path not in _LOADED:
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # not as __main__: defines worker and free_port only
        _LOADED[path] = module
    return _LOADED[path]


def _leave_the_group_on_old_torch() -> None:
    """Before torch 2.8, destroy_process_group() can hang both ranks after they printed everything:
    the Gloo group's destructor holds the GIL while it joins its worker threads, and a worker still
    freeing a finished collective's tensors waits for the GIL (seen with py-spy on 2.5.1 and
    2.7.1: 1 and 2 of the 23 two-process scripts in two checker runs on 2.7.1). pytorch#154976
    releases the GIL there; 2.8.0's libtorch_python.so is the first tracked one with it. A
    forked rank ends with os._exit, which frees nothing, so on those releases the runner leaves
    the group to it; the scripts' output is the same."""
    import torch
    import torch.distributed as dist

    if tuple(int(part) for part in re.findall(r"\d+", torch.__version__)[:2]) < (2, 8):
        dist.destroy_process_group = lambda group=None: None


def _rank_main(rank: int, folder: str, name: str, path: str, port: int) -> None:
    base = os.path.join(folder, f"{name}.rank{rank}")
    code = 0
    if sys.platform == "linux":  # forked (run_distributed): it ends with os._exit
        _leave_the_group_on_old_torch()
    sys.stdout.flush(), sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(base + ".stdout", "w") as out, open(base + ".stderr", "w") as err:
        os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        try:
            _load(path).worker(rank, 2, port)
        except BaseException as error:
            sys.stderr.write(reader_traceback(error))
            code = 1
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])
    with open(base + ".code", "w") as file:
        file.write(str(code))


def _failed(folder: str, name: str, message: str) -> None:
    for rank in (0, 1):
        base = os.path.join(folder, f"{name}.rank{rank}")
        with open(base + ".stderr", "w") as file:
            file.write(message if rank == 0 else "")
        with open(base + ".code", "w") as file:
            file.write("1")


def run_distributed(folder: str, names: list[str]) -> None:
    """In a process of its own: each script's two workers, one script after another."""
    import torch.multiprocessing as mp

    # the scripts' own choice: fork where it is safe (Linux), spawn elsewhere
    start_method = "fork" if sys.platform == "linux" else "spawn"
    for name in names:
        path = os.path.join(folder, name + ".py")
        try:
            port = _load(path).free_port()
        except Exception as error:  # an import this torch lacks: this script fails, the others run
            _failed(folder, name, reader_traceback(error))
            continue
        context = mp.start_processes(_rank_main, args=(folder, name, path, port), nprocs=2,
                                     join=False, start_method=start_method)
        deadline = time.monotonic() + DISTRIBUTED_TIMEOUT
        try:
            while not context.join(timeout=max(0.0, deadline - time.monotonic())):
                if time.monotonic() >= deadline:
                    _failed(folder, name, f"{name}.py did not finish in {DISTRIBUTED_TIMEOUT} s: "
                            "its two processes were killed")
                    break
        except Exception as error:  # a worker died without writing its result
            _failed(folder, name, reader_traceback(error))
        finally:
            for process in context.processes:
                if process.is_alive():
                    process.kill()
                process.join()
