"""Every example under snippets/ and every executable block under docs/, run through Sybil.

Test ids name the file and line: `snippets/shared/retain_grad.md:12`. Examples of one file share a
namespace and run in order, as on the page.

A snippet listed in snippets/versions.toml prints what its page shows on some torch releases
only. On the others its examples run as one test that compares them exactly with what that
release printed in a real run, recorded in <folder>/releases/<name>.md (tools/snippets/releases.py): a
difference nobody recorded, a crash, or a release with no recorded output fails.

The documents that import a library outside requirements.txt run in a second pytest process
(tests/second_process.py), started before collection in a full run, right after it otherwise;
their tests here report its outcome and message, and come last, so that both processes run at once.
"""

import gc
import os
import re
import sys
import warnings
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

from tools.examples.evaluate import PyconParser, module_globals, release_problems
from tools.examples.fresh import as_in_a_new_process
from tests import second_process
from tests.second_process import ONLY, OPTIONAL, SECOND
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


def evaluate(example) -> None:
    """An example that imports a library outside requirements.txt that is not installed (OPTIONAL,
    read from the requirement files by tests/second_process.py) fails, naming the package and the
    make target that installs it; it is never skipped."""
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

# --- The second process (tests/second_process.py) ---------------------------------------------
OUTCOMES: dict[str, dict[str, str]] = {}  # document -> {test id: outcome}, filled by conftest.py
start_second_process = second_process.start_for  # conftest.py calls it after collection
_document_of = second_process.document_of


def examples_passed(document: str) -> bool:
    """Every collected example of the document ran in this session and passed (tests/test_browser.py)."""
    ids = [param.id for param in EXAMPLES if param.id.split(":")[0].split(" (")[0] == document]
    seen = OUTCOMES.get(document, {})
    return bool(ids) and len(seen) == len(ids) and all(outcome == "passed" for outcome in seen.values())


def test_the_second_process_reads_from_the_files_the_documents_collection_gives():
    """tests/second_process.py picks its documents from their files, before collection: among the
    documents with collected examples, the same ones as their texts give."""
    collected = {Path(_first(param.values[0]).path).relative_to(ROOT).as_posix() for param in EXAMPLES}
    by_examples = {rel for rel in collected if second_process.belongs(rel, (ROOT / rel).read_text(encoding="utf-8"))}
    assert by_examples == SECOND & collected
    assert len(by_examples) > 100  # the libraries' pages: a scan that found nothing would pass above


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
        outcome, message = second_process.outcome(request.node.nodeid)
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
