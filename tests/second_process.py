"""The second examples process: the documents that import a library outside requirements.txt
(TensorFlow, JAX, Transformers, Captum, torchvision, Lightning, Opacus, diffusers, PyG) cost most
of the examples' time, much of it imports. They run in another pytest process, one document after
another, while this process runs the rest: both cores stay busy. Each of their tests in this
process (tests/test_examples.py) reports that process's outcome and message for the same test id,
as soon as that process has written it (tests/conftest.py writes each outcome as its test ends).

This module parses nothing: conftest.py starts the process before collection in a full run (the
first seconds of a run, when only this process collects, otherwise leave a core idle).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tools.examples.refresh_outputs import LAYERS, layer_libraries
from tools.snippets import DOCS, ROOT, SNIPPETS, is_snippet

ONLY = "GUIDE_EXAMPLES_ONLY"  # set in the second process: the documents it runs
OUTCOMES_FILE = "GUIDE_EXAMPLES_OUTCOMES"  # ... and where it writes each test's outcome as the test ends

# Each pinned library's import name -> the make target that installs it, read from the requirement
# files themselves: a library added to a layer is named here without anyone editing this file.
OPTIONAL = {library: target for layer, target in LAYERS.items() for library in layer_libraries(layer)}
_IMPORT = re.compile(r"^(?:>>> )?(?:import|from) (\w+)", re.MULTILINE)
# The torch.compile examples of the other pages join them (Dynamo's import and compilations); those
# of the torch.compile page stay in the first process. All of them here, this process ended last,
# 8-10 s after the first (which starts its examples only after collecting; this one starts before
# it in a whole run); none of them here, the first ended last by as much (full runs, 2026-12-01).
_COMPILES = re.compile(r"\btorch\.compile\(")
_FIRST = "snippets/torch-compile/"


def belongs(rel: str, text: str) -> bool:
    """Whether the document at `rel` (relative to the repository), whose text is `text`, runs here:
    it imports an OPTIONAL library, or compiles outside _FIRST."""
    return bool(set(_IMPORT.findall(text)) & set(OPTIONAL)
                or _COMPILES.search(text) and not rel.startswith(_FIRST))


def _documents() -> list[str]:
    """Every document tests/test_examples.py's Sybils parse (snippets' own .md files, docs/*.md)
    that belongs here, read from the files (a test checks them against the collected examples)."""
    found = []
    for folder, own in ((SNIPPETS, is_snippet), (DOCS, lambda path: True)):
        for path in sorted(folder.rglob("*.md")):
            rel = path.relative_to(ROOT).as_posix()
            if own(path) and belongs(rel, path.read_text(encoding="utf-8")):
                found.append(rel)
    return found


SECOND = set() if os.environ.get(ONLY) is not None else set(_documents())
_RUN: dict = {}


def document_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[1].split(":")[0].split(" (")[0] if "[" in nodeid else ""


def start(documents: list[str]) -> None:
    """Run the examples of these documents in another pytest process (a thread waits for it)."""
    if _RUN or not documents:
        return
    folder = tempfile.mkdtemp(prefix="guide-examples-")
    outcomes = Path(folder) / "outcomes.jsonl"
    outcomes.touch()
    env = {**os.environ, ONLY: ",".join(sorted(documents)), OUTCOMES_FILE: str(outcomes)}
    command = [sys.executable, "-m", "pytest", "tests/test_examples.py", "-q", "-p", "no:cacheprovider"]
    done = threading.Event()
    _RUN.update(done=done, folder=folder, file=outcomes.open("rb"), outcomes={}, waited=0.0)

    def run() -> None:
        from tests.built_site import BUILD_TIMES  # reported by conftest.py, never asserted

        started = time.perf_counter()
        try:
            _RUN["process"] = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                             timeout=600)
        except BaseException as error:
            _RUN["error"] = error
        BUILD_TIMES[f"examples of {len(documents)} documents, second process"] = time.perf_counter() - started
        done.set()

    threading.Thread(target=run, daemon=True, name="second-examples").start()


def start_for(selected_ids) -> None:
    """Start it for the selected test ids' documents of SECOND (a no-op if none, or started)."""
    start(sorted({document_of(i) for i in selected_ids} & SECOND))


def _read_outcomes() -> None:
    """The outcomes the second process has written since the last read (whole lines only)."""
    file = _RUN["file"]
    while True:
        at = file.tell()
        line = file.readline()
        if not line.endswith(b"\n"):  # nothing more, or a line still being written: read it next time
            file.seek(at)
            return
        name, outcome, message = json.loads(line)
        _RUN["outcomes"][name] = (outcome, message)


def outcome(nodeid: str) -> tuple[str, str]:
    """('passed' | 'failed' | 'xfailed', message) of this test in the second process, as soon as
    that process has written it: this process reports the second one's tests while it runs them,
    not all of them after it ends."""
    if not _RUN:
        start_for([nodeid])
    name = nodeid.split("::")[-1]
    started = time.perf_counter()
    while True:
        finished = _RUN["done"].is_set()  # read before the file: no outcome is written after it
        _read_outcomes()
        if name in _RUN["outcomes"] or finished:
            break
        _RUN["done"].wait(0.05)
    from tests.built_site import BUILD_TIMES  # how long this process waited: the balance

    _RUN["waited"] += time.perf_counter() - started
    BUILD_TIMES["this process waiting for the second one"] = _RUN["waited"]
    if name not in _RUN["outcomes"]:
        if "error" in _RUN:
            raise RuntimeError(f"the second examples process failed: {_RUN['error']!r}")
        process = _RUN.get("process")
        output = (process.stdout[-3000:] + process.stderr[-3000:]) if process else ""
        raise RuntimeError(f"the second examples process did not report {name}:\n{output}")
    return _RUN["outcomes"][name]


def finish() -> None:
    """conftest.py, at the end of the session: wait for the process, remove its folder."""
    if _RUN:
        _RUN["done"].wait(timeout=600)
        _RUN["file"].close()
        shutil.rmtree(_RUN["folder"], ignore_errors=True)
