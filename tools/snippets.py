"""One definition of what a snippet is, shared by the tests and the refresh command.

A snippet is ``snippets/<name>.md`` holding exactly one ```` ```pycon title="<name>" ```` fence:
a doctest transcript whose code and expected output are included byte-for-byte by the English
and the Chinese page.
"""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sybil.evaluators.doctest import DocTestEvaluator
from sybil.parsers.abstract import DocTestStringParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DOCS = ROOT / "docs"

# ELLIPSIS only, for memory addresses and file paths; tests/test_snippet_rules.py enforces where
# "..." may stand. No NORMALIZE_WHITESPACE and no NUMBER: outputs are regenerated, so they match
# exactly.
FLAGS = doctest.ELLIPSIS

FENCE = re.compile(
    r"^```pycon(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)
TITLE = re.compile(r'title="(?P<title>[^"]+)"')


class PyconParser:
    """Sybil parser for ```` ```pycon ```` fences, attributes such as ``title=`` allowed.

    Sybil's own Markdown parser only collects ```` ```python ```` fences and silently skips one
    whose info string carries a title, so it is not used for snippets.
    """

    def __init__(self, optionflags: int = FLAGS) -> None:
        self.lexer = FencedCodeBlockLexer(
            language=r"pycon(?:[ \t][^\n]*)?",
            mapping={"language": "arguments", "source": "source"},
        )
        self.string_parser = DocTestStringParser(DocTestEvaluator(optionflags))

    def __call__(self, document):
        for lexed in self.lexer(document):
            source = lexed.lexemes["source"]
            for region in self.string_parser(source, document.path):
                region.adjust(lexed, source)
                yield region


@dataclass
class Snippet:
    path: Path
    text: str

    @property
    def name(self) -> str:
        return self.path.stem

    @classmethod
    def load(cls, path: Path) -> "Snippet":
        return cls(path, path.read_text(encoding="utf-8"))

    def fences(self) -> list[re.Match]:
        return list(FENCE.finditer(self.text))

    @property
    def fence(self) -> re.Match:
        found = self.fences()
        if len(found) != 1:
            raise ValueError(f"{self.rel}: expected one ```pycon fence, found {len(found)}")
        return found[0]

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def title(self) -> str | None:
        match = TITLE.search(self.fence["info"])
        return match["title"] if match else None

    def examples(self) -> list[doctest.Example]:
        return doctest.DocTestParser().get_examples(self.fence["body"], self.rel)

    def script(self) -> str:
        """What Material's copy button copies: the code, without prompts or output."""
        return "".join(example.source for example in self.examples())

    def expected_output(self) -> str:
        return "".join(example.want for example in self.examples())


def snippet_paths() -> list[Path]:
    return sorted(SNIPPETS.glob("*.md"))


# --- Script snippets: programs a doctest cannot hold (several processes), with their output ---

SCRIPT_TIMEOUT = 300  # seconds; a hung distributed run must not hang the suite


def script_paths() -> list[Path]:
    """snippets/<name>.py, each with its expected stdout in snippets/<name>.out."""
    return sorted(SNIPPETS.glob("*.py"))


def run_script(path: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
        timeout=SCRIPT_TIMEOUT,
    )


def script_output(result: "subprocess.CompletedProcess[str]") -> str:
    """A script's stdout as <name>.out stores it: trailing spaces dropped, one newline per line."""
    return "".join(line.rstrip() + "\n" for line in result.stdout.splitlines())


def load_all() -> list[Snippet]:
    return [Snippet.load(path) for path in snippet_paths()]
