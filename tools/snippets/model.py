"""What a snippet is: the one definition the site build, the tests, the reader's checker and
the generators share.

A snippet is ``snippets/<page>/<name>.md`` holding exactly one ```` ```pycon title="<name>" ````
fence: a doctest transcript whose code and expected output are included byte-for-byte by the
English and the Chinese page. ``<page>`` is the path of the page that includes it, under docs/
without ``.md`` (``techniques/register-hook``); a snippet two or more pages include lives in
``snippets/shared/``. A script snippet is ``<name>.py`` with its stdout in ``<name>.out``, in the
same kind of folder. Names are unique across folders: versions.toml, the recorded release
outputs (``<folder>/releases/<name>.md``) and the matrix's results key on them.
Nothing here imports torch.
"""

from __future__ import annotations

import doctest
import os
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
_EXAMPLE = doctest.DocTestParser._EXAMPLE_RE  # a '>>>' line and its '...' lines: how doctest finds examples


def copied_code(body: str) -> str:
    """The code of a pycon fence's body as its copy button gives it: without prompts or output,
    its comment lines too (`>>> # ...`: doctest leaves those out of its examples, the button does not)."""
    code = []
    for match in _EXAMPLE.finditer(body):
        indent = len(match["indent"]) + 4  # the prompt: '>>> ' or '... '
        code += [line[indent:] + "\n" for line in match["source"].split("\n")]
    return "".join(code)


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
        return rel(self.path)

    @property
    def title(self) -> str | None:
        match = TITLE.search(self.fence["info"])
        return match["title"] if match else None

    def examples(self) -> list[doctest.Example]:
        return doctest.DocTestParser().get_examples(self.fence["body"], self.rel)

    def script(self) -> str:
        """What Material's copy button copies: the code, without prompts or output."""
        return copied_code(self.fence["body"])

    def expected_output(self) -> str:
        return "".join(example.want for example in self.examples())


SHARED = "shared"              # the folder of the snippets two or more pages include
RELEASES = "releases"          # <folder>/releases/<name>.md: what other torch releases print
# Tables and data the tools write into a page's folder; a page includes them, but they are not
# snippets (the Questions page includes a list per language: questions/en.md, questions/zh.md).
GENERATED = ("compatibility", "cost/benchmark", "questions")


def is_snippet(path: Path) -> bool:
    """A snippet's own file (.md transcript, .py script), not a recording or a generated table."""
    rel = path.relative_to(SNIPPETS)
    folders = rel.parent.as_posix()
    return (rel.parent != Path(".") and RELEASES not in rel.parent.parts and "__pycache__" not in rel.parts
            and not any(folders == g or folders.startswith(g + "/") for g in GENERATED))


def _own_files(suffix: str) -> list[Path]:
    """The snippets' own files with `suffix`, as is_snippet() decides, from one walk of snippets/
    with string tests (Path.rglob and is_snippet on each file cost 28 ms a call, and the tests
    call this hundreds of times)."""
    found = []
    for folder, subfolders, files in os.walk(SNIPPETS):
        rel = os.path.relpath(folder, SNIPPETS).replace(os.sep, "/")
        parts = rel.split("/")
        if RELEASES in parts or "__pycache__" in parts or any(
                rel == g or rel.startswith(g + "/") for g in GENERATED):
            subfolders[:] = []  # nothing below is a snippet either
            continue
        if rel == ".":
            continue
        found += [Path(folder, name) for name in files if name.endswith(suffix)]
    return sorted(found)


def snippet_paths() -> list[Path]:
    return _own_files(".md")


_FILES: dict[str, Path] = {}


def find(name: str, suffix: str = ".md") -> Path | None:
    """snippets/<folder>/<name><suffix>, wherever its page's folder is; None if there is none.

    One walk of snippets/ per process answers every call (compat asks thousands of times); it is
    walked again when a file it found has gone. A file created after the walk is not found: call
    forget_files() after creating one."""
    known = _FILES.get(f"{name}{suffix}")
    if not _FILES or (known is not None and not known.exists()):
        forget_files()
        for each in SNIPPETS.rglob("*"):
            if each.suffix in {".md", ".py", ".out"} and each.is_file() and is_snippet(each):
                _FILES.setdefault(each.name, each)
    return _FILES.get(f"{name}{suffix}")


def forget_files() -> None:
    _FILES.clear()


def source(name: str) -> Path | None:
    """The snippet's own file: its transcript (.md), else its script (.py)."""
    return find(name, ".md") or find(name, ".py")


def rel(path: Path) -> str:
    """A path as messages show it: from the checkout's root."""
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:  # a file outside the project (a test's own)
        return path.as_posix()



# --- Script snippets: programs a doctest cannot hold (several processes), with their output ---

SCRIPT_TIMEOUT = 300  # seconds; a hung distributed run must not hang the suite
DISTRIBUTED_TIMEOUT = 90  # seconds for each distributed script in the shared run (its gloo timeout is 60)


def script_paths() -> list[Path]:
    """snippets/<folder>/<name>.py, each with its expected stdout in <name>.out beside it."""
    return _own_files(".py")


# The end of every distributed script snippet, byte for byte: what `python <name>.py` runs is
# worker(rank, 2, port) in two processes, which is what run_distributed() runs for each.
DISTRIBUTED_MAIN = '''

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
'''


def is_distributed(path: Path) -> bool:
    return "def worker(rank, world_size, port):" in path.read_text(encoding="utf-8")


def load_all() -> list[Snippet]:
    return [Snippet.load(path) for path in snippet_paths()]
