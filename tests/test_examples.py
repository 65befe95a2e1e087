"""Every example under snippets/ and every executable block under docs/, run through Sybil.

Test ids name the file and line: `snippets/retain_grad.md:12`. Examples of one file share a
namespace and run in order, as on the page.

A snippet listed in snippets/versions.toml prints what its page shows on some torch releases
only. On the others its examples run as one test that must fail (strict xfail, reported as
such): the difference is expected and shown, never skipped, and a gate that is no longer needed
fails the run.
"""

import re
import warnings
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

from tools.snippets import (
    DOCS, FLAGS, ROOT, SNIPPETS, PyconParser, module_globals, torch_release, version_gates,
)

SYBILS = [
    Sybil(parsers=[PyconParser()], path=str(SNIPPETS), patterns=["*.md"], name="snippets"),
    Sybil(
        parsers=[PyconParser(), PythonCodeBlockParser(doctest_optionflags=FLAGS)],
        path=str(DOCS),
        patterns=["*.md"],
        name="docs",
    ),
]


def _examples():
    for sybil in SYBILS:
        for path in sorted(Path(sybil.path).rglob("*.md")):
            if sybil.should_parse(path):
                rel = path.relative_to(ROOT).as_posix()
                document = sybil.parse(path)
                document.namespace = module_globals(rel)  # a real module, as for a script
                gate = GATES.get(path.stem) if sybil.name == "snippets" else None
                if gate is not None and gate.excludes(RELEASE):
                    examples = list(document.examples())
                    if gate.warns:  # the page's output, and the warning the page mentions
                        yield pytest.param((examples, gate.warns), id=f"{rel} (may warn outside {gate.label})")
                    else:
                        yield pytest.param(
                            examples, id=f"{rel} ({gate.label})",
                            marks=pytest.mark.xfail(strict=True, reason=f"{gate.label}: {gate.why}"),
                        )
                    continue
                for example in document.examples():
                    yield pytest.param(example, id=f"{rel}:{example.line}")


# Libraries outside requirements.txt, by the make target that installs them. A missing one fails
# each example that imports it, naming the package and the target; it is never skipped.
OPTIONAL = {
    "tensorflow": "install-frameworks",
    "jax": "install-frameworks",
    "torchvision": "install-models",
    "transformers": "install-models",
    "captum": "install-models",
}


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
EXAMPLES = list(_examples())


_STARTED: set[str] = set()


def _as_in_a_fresh_process(example) -> None:
    """Before a file's first example: forget what earlier files compiled, as a reader's new
    process would. Dynamo caches compiled code per function (nn.Linear.forward is one function for
    every Linear) and, past its recompile limit, runs it uncompiled: graph counts would then
    depend on which files ran before."""
    import sys

    if example.path not in _STARTED:
        _STARTED.add(example.path)
        if "torch._dynamo" in sys.modules:
            sys.modules["torch._dynamo"].reset()


@pytest.mark.parametrize("example", EXAMPLES)
def test_example(example):
    first = example[0][0] if isinstance(example, tuple) else example[0] if isinstance(example, list) else example
    _as_in_a_fresh_process(first)
    if isinstance(example, tuple):  # the warning torch raises once per process, from inside
        examples, warning = example
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*" + re.escape(warning))  # matched from the start
            for each in examples:
                evaluate(each)
        return
    for each in example if isinstance(example, list) else [example]:
        evaluate(each)


def test_examples_were_collected():
    assert len(EXAMPLES) > 0, "Sybil collected no example: check the parsers and paths"


def test_a_missing_library_names_its_make_target(monkeypatch):
    """An example whose library is not installed fails with the package and the make target."""
    import sys

    first = next(e for (e,) in (param.values for param in EXAMPLES) if not isinstance(e, (list, tuple))
                 and "snippets/captum_" in str(e.path) and "from captum" in e.parsed.source)
    for name in [n for n in sys.modules if n == "captum" or n.startswith("captum.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "captum", None)  # what an import then finds: not installed
    with pytest.raises(pytest.fail.Exception) as failed:
        evaluate(first)
    assert "imports captum, which is not installed: run `make install-models`" in str(failed.value)
    assert "snippets/captum_" in str(failed.value)
