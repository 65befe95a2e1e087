"""The quick loop runs what changed (issue 33's budget): a snippet document whose examples all
passed in an earlier run of this checkout, or a script snippet that did, is left out of the next
run while every input it has is byte for byte the same. It is deselected, never reported as
passed: pytest's summary counts it as deselected, and a section at the end says how many were
left out and how to run them.

The inputs, all hashed: the document itself (a snippet's Markdown, a script and its .out), what
its releases recorded (<folder>/releases/<name>.md); and, shared by every document, the Python
files under tools/ and tests/ that running an example or a script can reach (their imports from
tests/test_examples.py, tests/test_scripts.py and conftest.py's own imports on, and the files they
start by name: a change to the site's hooks or the browser job reruns none of them) and every
file there that is not Python, every other file under snippets/ (versions.toml, the data files), the
requirement files and pyproject.toml, each installed distribution with its version (and
DeepSpeed's folder), the Python, and the environment variables that reach torch or the tests.
A change to any shared input runs everything again.

A whole test file can be such a document too (_FILES): tests/test_benchmark.py re-measures the cost
page's memory relations on small models (a quarter of the quick loop's own test time when the
builds run beside it); its inputs are its own file and the folders _FILES names, beside the shared
ones. It is recorded only after a run that selected all of it (no -k).

Off, so that everything runs: in CI (`CI` set), with GUIDE_RUN_ALL=1 (`make test` sets it), in the
second examples process, and when the command line names test ids (`file::test`). The record is
.pytest_cache/guide-passed.json, local to the checkout; a document that fails, or does not run to
the end, loses its entry.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

from tools.snippets import ROOT, SNIPPETS, releases

RECORD = ROOT / ".pytest_cache" / "guide-passed.json"
_ENV_PREFIXES = ("OMP_", "MKL_", "KMP_", "TORCH", "PYTORCH", "CUDA", "HF_", "TRANSFORMERS", "TF_", "JAX",
                 "XLA", "PYTHON", "LANG", "LC_", "GUIDE_", "NO_MKDOCS", "TOKENIZERS")
# GUIDE_RUN_ALL only turns this off; the others are the empty cache folders that
# tools/examples/offline.py makes anew for each session (their names are random).
_SET_BY_THE_SUITE = {"GUIDE_RUN_ALL", "GUIDE_EMPTY_CACHE", "HF_HOME", "TORCH_HOME"}
_SHARED_FILES = ("pyproject.toml", "models-excludes.txt")
_KINDS = {  # test function -> how its test id names the document
    "tests/test_examples.py::test_example": "example",
    "tests/test_scripts.py::test_script_prints_its_expected_output": "script",
}
# Test files that are one document each -> what they read besides the shared inputs
_FILES = {
    "tests/test_benchmark.py": ("tests/test_benchmark.py", "tools/measure", "snippets/cost", "docs/cost.md",
                                "docs/cost.zh.md"),
}


def enabled(config) -> bool:
    if os.environ.get("CI") or os.environ.get("GUIDE_RUN_ALL") == "1" or os.environ.get("GUIDE_EXAMPLES_ONLY") is not None:
        return False
    return not any("::" in arg for arg in config.args)


def document_of(nodeid: str) -> str | None:
    """The document a test runs (snippets/<folder>/<name>.md or .py, or docs/<page>.md), or None
    for a test that is not one of a document's."""
    file = nodeid.split("::", 1)[0]
    if file in _FILES:
        return file
    function, _, param = nodeid.partition("[")
    if function not in _KINDS or not param:
        return None
    return param.rstrip("]").split(" (")[0].rsplit(":", 1)[0] if _KINDS[function] == "example" else \
        param.rstrip("]").split(" (")[0]


def _hash_files(digest, paths) -> None:
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")


def _documents_and_their_files() -> set[Path]:
    """Every file that is some document's own input (hashed per document, not shared)."""
    own = set()
    for path in SNIPPETS.rglob("*"):
        if path.suffix in (".md", ".py", ".out") and "__pycache__" not in path.parts:
            own.add(path)
    return own


# Where an example's or a script's run starts: conftest.py's own imports (its functions import
# the site builds and the browser job, which no example reads), the two test files, this one.
_RUNS_FROM = (("tests/conftest.py", True), ("tests/test_examples.py", False), ("tests/test_scripts.py", False),
              ("tests/unchanged.py", False))


def _module_file(name: str) -> Path | None:
    path = ROOT.joinpath(*name.split("."))
    return next((p for p in (path.with_suffix(".py"), path / "__init__.py") if p.is_file()), None)


def _what_runs_the_examples() -> set[Path]:
    """The Python files under tools/ and tests/ that an example's or a script's run can reach: the
    imports (also inside functions) from _RUNS_FROM on, and the files they start by name
    (`Path(__file__).with_name("distributed_runner.py")`). A change elsewhere (the site's hooks,
    the browser job, the checker) leaves the examples' records alone."""
    by_name = {p.name: p for folder in ("tools", "tests") for p in (ROOT / folder).rglob("*.py")
               if "__pycache__" not in p.parts}
    seen: set[Path] = set()
    todo = [(ROOT / rel, top_only) for rel, top_only in _RUNS_FROM]
    while todo:
        path, top_only = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in (tree.body if top_only else ast.walk(tree)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in by_name:
                todo.append((by_name[node.value], False))
            for name in names:
                parts = name.split(".")
                if parts[0] in ("tools", "tests"):
                    found = [_module_file(".".join(parts[:i])) for i in range(1, len(parts) + 1)]
                    todo += [(f, False) for f in found if f is not None]
    return seen


def shared_key() -> str:
    digest = hashlib.sha256()
    runs = _what_runs_the_examples()
    files = [p for folder in ("tools", "tests") for p in (ROOT / folder).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and (p.suffix != ".py" or p in runs)]
    own = _documents_and_their_files()
    files += [p for p in SNIPPETS.rglob("*") if p.is_file() and p not in own and "__pycache__" not in p.parts]
    files += sorted(ROOT.glob("requirements*.txt")) + [ROOT / name for name in _SHARED_FILES if (ROOT / name).is_file()]
    _hash_files(digest, files)
    distributions = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    apart = ROOT / ".venv" / "deepspeed"
    if apart.is_dir():
        distributions += sorted(p.name for p in apart.glob("*.dist-info"))
    environment = sorted(f"{k}={v}" for k, v in os.environ.items()
                         if k.startswith(_ENV_PREFIXES) and k not in _SET_BY_THE_SUITE)
    for line in [sys.version, platform.platform(), *distributions, *environment]:
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()


def document_key(shared: str, document: str) -> str:
    digest = hashlib.sha256(shared.encode())
    path = ROOT / document
    if document in _FILES:
        inputs = [p for rel in _FILES[document] for p in ([ROOT / rel] if (ROOT / rel).is_file() else
                  (ROOT / rel).rglob("*")) if "__pycache__" not in p.parts]
    elif document.startswith("snippets/"):
        inputs = [path, path.with_suffix(".out"), releases.path(path.stem)]
    else:
        inputs = [path]
    _hash_files(digest, [p for p in inputs if p.is_file()])
    return digest.hexdigest()


def _read(record: Path) -> dict[str, str]:
    try:
        return json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class Unchanged:
    """conftest.py's plugin: deselects at collection, records at the end."""

    def __init__(self, config, shared: str | None = None, record: Path = RECORD) -> None:
        self.config, self.record = config, record
        self.shared = shared_key() if shared is None else shared
        self.keys: dict[str, str] = {}
        self.left_out: dict[str, int] = {}  # document -> its tests left out
        self.ran: dict[str, list[str]] = {}  # document -> its selected test ids
        self.outcomes: dict[str, str] = {}

    def key(self, document: str) -> str:
        if document not in self.keys:
            self.keys[document] = document_key(self.shared, document)
        return self.keys[document]

    def deselect(self, items) -> list:
        record = _read(self.record)
        keep, drop = [], []
        for item in items:
            document = document_of(item.nodeid)
            if document is not None and record.get(document) == self.key(document):
                drop.append(item)
                self.left_out[document] = self.left_out.get(document, 0) + 1
            else:
                keep.append(item)
                if document is not None:
                    self.ran.setdefault(document, []).append(item.nodeid)
        if drop:
            self.config.hook.pytest_deselected(items=drop)
        return keep

    def logreport(self, report) -> None:
        if document_of(report.nodeid) is None:
            return
        if report.failed or report.skipped:
            self.outcomes[report.nodeid] = "failed" if report.failed else "skipped"
        elif report.when == "call":
            self.outcomes.setdefault(report.nodeid, "passed")

    def save(self) -> None:
        record = _read(self.record)
        chosen = bool(getattr(self.config.option, "keyword", ""))  # -k: a test file may have run in part
        for document, ids in self.ran.items():
            if document in _FILES and chosen:
                record.pop(document, None)
            elif all(self.outcomes.get(nodeid) == "passed" for nodeid in ids):
                record[document] = self.key(document)
            else:
                record.pop(document, None)
        self.record.parent.mkdir(parents=True, exist_ok=True)
        self.record.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def summary(self, terminalreporter) -> None:
        if not self.left_out:
            return
        tests = sum(self.left_out.values())
        files = sorted(d for d in self.left_out if d in _FILES)
        scripts = sum(1 for d in self.left_out if d.endswith(".py") and d not in _FILES)
        also = "".join(f", {name}" for name in files)
        terminalreporter.section("unchanged since they passed: not run")
        terminalreporter.write_line(
            f"{tests} tests of {len(self.left_out) - scripts - len(files)} documents, {scripts} scripts{also} were left out "
            f"(deselected): every input is as it was when they last passed here (.pytest_cache/guide-passed.json). "
            "GUIDE_RUN_ALL=1 runs them; `make test` and CI always do.")
