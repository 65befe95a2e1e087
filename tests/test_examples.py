"""Every example under snippets/ and every executable block under docs/, run through Sybil.

Test ids name the file and line: `snippets/retain_grad.md:12`. Examples of one file share a
namespace and run in order, as on the page.
"""

from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

from tools.snippets import DOCS, FLAGS, ROOT, SNIPPETS, PyconParser

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
                for example in sybil.parse(path).examples():
                    yield pytest.param(example, id=f"{rel}:{example.line}")


EXAMPLES = list(_examples())


@pytest.mark.parametrize("example", EXAMPLES)
def test_example(example):
    example.evaluate()


def test_examples_were_collected():
    assert len(EXAMPLES) > 0, "Sybil collected no example: check the parsers and paths"
