"""Every example under snippets/ and every executable block under docs/, run through Sybil.

Test ids name the file and line: `snippets/shared/retain_grad.md:12`. Examples of one file share a
namespace and run in order, as on the page.

A snippet listed in snippets/versions.toml prints what its page shows on some torch releases
only. On the others its examples run as one test that compares them exactly with what that
release printed in a real run, recorded in <folder>/releases/<name>.md (tools/snippets/releases.py): a
difference nobody recorded, a crash, or a release with no recorded output fails.

The documents that import a library outside requirements.txt run in a second pytest process,
started right after collection (below, "The second process"); their tests here report its outcome
and message, and come last, so that both processes run at once.
"""

import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

from tools.examples.evaluate import PyconParser, module_globals, release_problems
from tools.examples.fresh import as_in_a_new_process
from tools.examples.refresh_outputs import LAYERS, layer_libraries
from tools.snippets import DOCS, FLAGS, ROOT, SNIPPETS, is_snippet, releases, torch_release, version_gates
from tools.snippets import rel as rel_path

SYBILS = [
    # each folder's releases/ holds other releases' outputs of gated snippets: compared by ReleaseRun;
    # the generated tables hold no examples (tools.snippets.is_snippet tells them apart)
    Sybil(parsers=[PyconParser()], path=str(SNIPPETS), patterns=["*.md"], name="snippets"),
    Sybil(
        parsers=[PyconParser(), PythonCodeBlockParser(doctest_optionflags=FLAGS)],
        path=str(DOCS),
        patterns=["*.md"],
        name="docs",
    ),
]


ONLY = "GUIDE_EXAMPLES_ONLY"  # set in the second process: the documents it runs (see below)
# ... and the file where it writes each test's outcome as the test ends (tests/conftest.py)
OUTCOMES_FILE = "GUIDE_EXAMPLES_OUTCOMES"


class ReleaseRun:
    """A gated snippet on a release its gate excludes: run and compared exactly with what
    <folder>/releases/<name>.md recorded from a real run of this release (tools/snippets/releases.py)."""

    def __init__(self, path: Path, namespace: dict) -> None:
        self.path, self.namespace = str(path), namespace

    def evaluate(self) -> None:
        problem = release_problems(Path(self.path), VERSION, self.namespace)
        if problem:
            _varies(Path(self.path).stem, problem)
            raise AssertionError(problem)


def _varies(name: str, problem: str) -> None:
    """On a release where the page says the output changes from run to run: an expected failure
    (reported as xfailed, never as passed), with what this run printed."""
    gate = GATES.get(name)
    if gate is not None and gate.varies(RELEASE):
        pytest.xfail(f"varies from run to run on torch {VERSION} (snippets/versions.toml): {problem}")


def _first(value):
    """The first example of a test's parameter (something with a .path)."""
    if isinstance(value, tuple):
        return value[0][0]
    return value[0] if isinstance(value, list) else value


def _examples():
    only = os.environ.get(ONLY)
    for sybil in SYBILS:
        for path in sorted(Path(sybil.path).rglob("*.md")):
            if sybil.should_parse(path) and (sybil.name != "snippets" or is_snippet(path)):
                rel = path.relative_to(ROOT).as_posix()
                if only is not None and rel not in only.split(","):
                    continue
                document = sybil.parse(path)
                document.namespace = module_globals(rel)  # a real module, as for a script
                gate = GATES.get(path.stem) if sybil.name == "snippets" else None
                if gate is not None and gate.excludes(RELEASE):
                    examples = list(document.examples())
                    if gate.warns_on(RELEASE):  # the page's output, and the warning the page mentions
                        yield pytest.param((examples, gate.warns), id=f"{rel} (may warn outside {gate.label})")
                    else:
                        yield pytest.param(ReleaseRun(path, document.namespace),
                                           id=f"{rel} (differs on torch {VERSION}: {rel_path(releases.path(path.stem))})")
                    continue
                for example in document.examples():
                    yield pytest.param(example, id=f"{rel}:{example.line}")


# Libraries outside requirements.txt, by the make target that installs them. A missing one fails
# each example that imports it, naming the package and the target; it is never skipped.
# Each pinned library's import name -> the make target that installs it, read from the requirement
# files themselves: a library added to a layer is named here without anyone editing this file.
OPTIONAL = {library: target for layer, target in LAYERS.items() for library in layer_libraries(layer)}


def evaluate(example) -> None:
    try:
        example.evaluate()
    except ModuleNotFoundError as err:
        package = (err.name or "").split(".")[0]
        if package not in OPTIONAL:
            raise
        pytest.fail(
            f"{Path(example.path).relative_to(ROOT)}:{example.line} imports {package}, which is not "
            f"installed: run `make {OPTIONAL[package]}` (`make test` installs it)",
            pytrace=False,
        )


GATES = version_gates()
RELEASE = torch_release()
VERSION = __import__("torch").__version__.split("+")[0]
EXAMPLES = list(_examples())

# --- The second process --------------------------------------------------------------------
# The documents that import a library outside requirements.txt (TensorFlow, JAX, Transformers,
# Captum, torchvision, Lightning, Opacus, diffusers, PyG) cost most of the examples' time, much of it imports.
# conftest.py starts them right after collection in a second pytest process, which runs them as
# here, one document after another, while this process runs the rest: both cores stay busy. Each
# of their tests here reports that process's outcome and message for the same test id.
_IMPORT = re.compile(r"^(?:>>> )?(?:import|from) (\w+)", re.MULTILINE)
# The torch.compile examples join them: Dynamo's import and compilations are this process's largest
# cost after the libraries', and with them here both processes end at about the same time.
_COMPILES = re.compile(r"\btorch\.compile\(")


def _second_process_documents() -> list[str]:
    if os.environ.get(ONLY) is not None:
        return []
    found = []
    for param in EXAMPLES:
        first = _first(param.values[0])
        rel = Path(first.path).relative_to(ROOT).as_posix()
        text = Path(first.path).read_text(encoding="utf-8")
        if rel not in found and (set(_IMPORT.findall(text)) & set(OPTIONAL) or _COMPILES.search(text)):
            found.append(rel)
    return found


SECOND = set(_second_process_documents())
OUTCOMES: dict[str, dict[str, str]] = {}  # document -> {test id: outcome}, filled by conftest.py


def examples_passed(document: str) -> bool:
    """Every collected example of the document ran in this session and passed (tests/test_browser.py)."""
    ids = [param.id for param in EXAMPLES if param.id.split(":")[0].split(" (")[0] == document]
    seen = OUTCOMES.get(document, {})
    return bool(ids) and len(seen) == len(ids) and all(outcome == "passed" for outcome in seen.values())
_SECOND_RUN: dict = {}


def start_second_process(selected_ids) -> None:
    """Run the selected examples of SECOND in another pytest process (a thread waits for it)."""
    ids = [i for i in selected_ids if _document_of(i) in SECOND]
    if _SECOND_RUN or not ids:
        return
    folder = tempfile.mkdtemp(prefix="guide-examples-")
    outcomes = Path(folder) / "outcomes.jsonl"
    outcomes.touch()
    documents = sorted({_document_of(i) for i in ids})
    env = {**os.environ, ONLY: ",".join(documents), OUTCOMES_FILE: str(outcomes)}
    command = [sys.executable, "-m", "pytest", "tests/test_examples.py", "-q", "-p", "no:cacheprovider"]
    done = threading.Event()
    _SECOND_RUN.update(done=done, folder=folder, file=outcomes.open("rb"), outcomes={},
                       waited=0.0)

    def run() -> None:
        from tests.built_site import BUILD_TIMES  # reported by conftest.py, never asserted

        started = time.perf_counter()
        try:
            _SECOND_RUN["process"] = subprocess.run(command, cwd=ROOT, env=env, capture_output=True,
                                                    text=True, timeout=600)
        except BaseException as error:
            _SECOND_RUN["error"] = error
        BUILD_TIMES[f"examples of {len(documents)} documents, second process"] = time.perf_counter() - started
        done.set()

    threading.Thread(target=run, daemon=True, name="second-examples").start()


def _document_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[1].split(":")[0].split(" (")[0] if "[" in nodeid else ""


def _read_outcomes() -> None:
    """The outcomes the second process has written since the last read (whole lines only)."""
    file = _SECOND_RUN["file"]
    while True:
        at = file.tell()
        line = file.readline()
        if not line.endswith(b"\n"):  # nothing more, or a line still being written: read it next time
            file.seek(at)
            return
        name, outcome, message = json.loads(line)
        _SECOND_RUN["outcomes"][name] = (outcome, message)


def _second_outcome(nodeid: str) -> tuple[str, str]:
    """('passed' | 'failed' | 'xfailed', message) of this test in the second process, as soon as
    that process has written it (tests/conftest.py writes each outcome as its test ends): this
    process reports the second one's tests while it runs them, not all of them after it ends."""
    if not _SECOND_RUN:
        start_second_process([nodeid])
    name = nodeid.split("::")[-1]
    started = time.perf_counter()
    while True:
        finished = _SECOND_RUN["done"].is_set()  # read before the file: no outcome written after it
        _read_outcomes()
        if name in _SECOND_RUN["outcomes"] or finished:
            break
        _SECOND_RUN["done"].wait(0.05)
    from tests.built_site import BUILD_TIMES  # how long this process waited: the balance

    _SECOND_RUN["waited"] += time.perf_counter() - started
    BUILD_TIMES["this process waiting for the second one"] = _SECOND_RUN["waited"]
    if name not in _SECOND_RUN["outcomes"]:
        if "error" in _SECOND_RUN:
            raise RuntimeError(f"the second examples process failed: {_SECOND_RUN['error']!r}")
        process = _SECOND_RUN.get("process")
        output = (process.stdout[-3000:] + process.stderr[-3000:]) if process else ""
        raise RuntimeError(f"the second examples process did not report {name}:\n{output}")
    return _SECOND_RUN["outcomes"][name]


_STARTED: set[str] = set()


def _as_in_a_fresh_process(example) -> None:
    """Before a file's first example: the process as a reader's new one has it (tools/examples/fresh.py).
    What the earlier documents left is collected, and the rest, which lives to the end of the
    session (their namespaces, every library imported), is frozen out of the garbage collector's
    walks: a gc.collect() inside an example (Accelerate calls one in each Trainer.train()) then
    walks only what its own document made, as in a reader's process. The second examples process
    spent 19 s of its 253 s in those four Trainer examples' collections (py-spy, 2026-11-30)."""
    if example.path not in _STARTED:
        _STARTED.add(example.path)
        as_in_a_new_process()
        gc.collect()
        gc.freeze()


@pytest.mark.parametrize("example", EXAMPLES)
def test_example(example, request):
    first = _first(example)
    if Path(first.path).relative_to(ROOT).as_posix() in SECOND:
        outcome, message = _second_outcome(request.node.nodeid)
        if outcome == "failed":
            pytest.fail(message, pytrace=False)
        if outcome == "xfailed":  # only where the page says the output varies from run to run
            _varies(Path(first.path).stem, message)
            raise AssertionError(message)
        return
    _as_in_a_fresh_process(first)
    if isinstance(example, tuple):  # the warning torch raises once per process, from inside
        examples, warning = example
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*" + re.escape(warning))  # matched from the start
            for each in examples:
                try:
                    evaluate(each)
                except Exception as failure:
                    _varies(Path(first.path).stem, str(failure))
                    raise
        return
    for each in example if isinstance(example, list) else [example]:
        evaluate(each)


def test_examples_were_collected():
    assert len(EXAMPLES) > 0, "Sybil collected no example: check the parsers and paths"


def test_a_missing_library_names_its_make_target(monkeypatch):
    """An example whose library is not installed fails with the package and the make target."""
    import sys

    # the first example that imports one of them (on an older torch the captum pages are gated)
    first, library = next((e, lib) for (e,) in (param.values for param in EXAMPLES)
                          if not isinstance(e, (list, tuple, ReleaseRun))
                          for lib in OPTIONAL if re.search(rf"^(from|import) {lib}\b", e.parsed.source, re.M))
    for name in [n for n in sys.modules if n == library or n.startswith(library + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, library, None)  # what an import then finds: not installed
    with pytest.raises(pytest.fail.Exception) as failed:
        evaluate(first)
    assert f"imports {library}, which is not installed: run `make {OPTIONAL[library]}`" in str(failed.value)
    assert "snippets/" in str(failed.value)
