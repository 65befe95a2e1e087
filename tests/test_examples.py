"""Every example under snippets/ and every executable block under docs/, run through Sybil.

Test ids name the file and line: `snippets/retain_grad.md:12`. Examples of one file share a
namespace and run in order, as on the page.
"""

from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

from tools.snippets import DOCS, FLAGS, ROOT, SNIPPETS, PyconParser, module_globals

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
                for example in document.examples():
                    yield pytest.param(example, id=f"{rel}:{example.line}")


EXAMPLES = list(_examples())


@pytest.mark.parametrize("example", EXAMPLES)
def test_example(example):
    example.evaluate()


def test_examples_were_collected():
    assert len(EXAMPLES) > 0, "Sybil collected no example: check the parsers and paths"
