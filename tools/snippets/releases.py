"""What a gated example prints on the torch releases where its page's output does not hold.

A snippet named in snippets/versions.toml prints something else on some releases. What it prints
there is an output like any other: recorded from a real run of that release, kept beside the
snippet in ``snippets/<folder>/releases/<name>.md`` and compared exactly by the tests on that release.

    ## torch 2.4.1, 2.6.0          one section per distinct output, naming the releases it holds on

    ```pycon                       a doctest snippet: its own transcript, the same code,
    >>> ...                        that release's outputs; after an example that raised, the
    ```                            examples that were not reached are left out

    ```text                        a script snippet: its stdout; a non-zero exit adds a last line
    ...                            "[failed] <the last line of its exception>"
    ```

What is compared is what a reader sees printed (stdout): warnings, which go to stderr, are ignored
both when recording and when comparing, while on the pinned release the tests still turn them into
errors. Written by ``python -m tools.examples.refresh_outputs --release`` on the release itself (``make matrix``
records with RECORD=1); never typed. Only the standard library: tools.examples.compat and the reader's
checker read these files too.
"""

from __future__ import annotations

import difflib
import doctest
import re
from dataclasses import dataclass
from pathlib import Path

from tools.snippets.model import RELEASES, SNIPPETS, snippet_paths, script_paths, source

# Releases older than the matrix's (tools/examples/compat.py, VERSIONS), run only to record what a
# snippet prints there where its gate names the release in `differs_on`: the older wording of an
# error message that users still paste, which the error pages quote (noxfile.py, session
# "recordings"; `make recordings`). Nothing else runs on them.
OLDER = ["2.0.1", "1.13.1"]


def names_release(gate, version: str) -> bool:
    """Whether the gate names this release itself (differs_on), not only through since/before."""
    return release(version) in {release(v) for v in gate.differs_on}


HEADER = (
    "<!-- What snippets/{file} prints on the torch releases named below, where its page's\n"
    "     output does not hold (snippets/versions.toml). Recorded from a real run of each release\n"
    "     by `python -m tools.examples.refresh_outputs --release` (RECORD=1 make matrix): do not edit. -->\n"
)
SECTION = re.compile(r"^## torch (?P<releases>[\d., ]+)\n\n```(?P<kind>pycon|text)\n(?P<body>.*?)^```\n",
                     re.MULTILINE | re.DOTALL)


def release(version: str) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor)


@dataclass
class Section:
    releases: list[str]   # exact versions, as recorded ("2.9.1")
    kind: str             # "pycon" (doctest snippet) or "text" (script snippet)
    body: str             # the fence's content

    def holds_on(self, version: str) -> bool:
        return release(version) in {release(v) for v in self.releases}

    def examples(self) -> list[doctest.Example]:
        return doctest.DocTestParser().get_examples(self.body, "release")

    def output(self) -> str:
        """What the page's reader sees printed: the expected outputs, or the script's stdout."""
        if self.kind == "text":
            return self.body
        return "".join(e.want if e.exc_msg is None else "Traceback (most recent call last):\n  ...\n" + e.exc_msg
                       for e in self.examples())


_PATHS: dict = {}  # name -> (its source, its recording's path), joined again when the source moves


def path(name: str) -> Path:
    """<the snippet's folder>/releases/<name>.md (shared/ for a name no folder holds: a test's)."""
    own = source(name)
    known = _PATHS.get(name)
    if known is None or known[0] != own:
        folder = own.parent if own else SNIPPETS / "shared"
        known = _PATHS[name] = (own, folder / RELEASES / f"{name}.md")
    return known[1]


def recorded() -> list[Path]:
    """Every recording, whichever page folder holds it."""
    return sorted(p for folder in {s.parent for s in snippet_paths() + script_paths()}
                  for p in (folder / RELEASES).glob("*.md"))


# Each file as last read, by its stat (size, time, inode): read again only when it changed.
_READ: dict = {}


def read_bytes(file: Path) -> bytes | None:
    try:
        stat = file.stat()
    except FileNotFoundError:
        return None
    key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    known = _READ.get(file)
    if known is None or known[0] != key:
        known = _READ[file] = (key, file.read_bytes())
    return known[1]


# Each recording's sections as last parsed, by the bytes read_bytes gave (the same object while the
# file is unchanged): compat's digests load every recording over and over. Callers get new Section
# objects, which they may change.
_PARSED: dict = {}


def load(name: str) -> list[Section]:
    file = path(name)
    data = read_bytes(file)
    if data is None:
        return []
    known = _PARSED.get(file)
    if known is None or known[0] is not data:
        known = _PARSED[file] = (data, [(tuple(s.releases), s.kind, s.body) for s in parse(data.decode("utf-8"))])
    return [Section(list(releases), kind, body) for releases, kind, body in known[1]]


def parse(text: str) -> list[Section]:
    return [Section([v.strip() for v in m["releases"].split(",")], m["kind"], m["body"])
            for m in SECTION.finditer(text)]


def for_release(name: str, version: str) -> Section | None:
    return next((s for s in load(name) if s.holds_on(version)), None)


def render(file: str, sections: list[Section]) -> str:
    ordered = sorted(sections, key=lambda s: min(release(v) for v in s.releases))
    parts = [HEADER.format(file=file)]
    for section in ordered:
        versions = sorted(section.releases, key=release)
        parts.append(f"\n## torch {', '.join(versions)}\n\n```{section.kind}\n{section.body}```\n")
    return "".join(parts)


def record(name: str, file: str, version: str, kind: str, body: str) -> bool:
    """Store `body` as what snippet `name` prints on `version`; True if the file changed."""
    sections = [Section([v for v in s.releases if release(v) != release(version)], s.kind, s.body)
                for s in load(name)]
    same = next((s for s in sections if s.kind == kind and s.body == body), None)
    if same is not None:
        same.releases.append(version)
    else:
        sections.append(Section([version], kind, body))
    return _write(name, file, [s for s in sections if s.releases])


def forget(name: str, file: str, version: str) -> bool:
    """Remove `version` from the snippet's recorded releases (its page's output holds there)."""
    sections = [Section([v for v in s.releases if release(v) != release(version)], s.kind, s.body)
                for s in load(name)]
    return _write(name, file, [s for s in sections if s.releases])


def _write(name: str, file: str, sections: list[Section]) -> bool:
    target = path(name)
    old = target.read_text(encoding="utf-8") if target.exists() else None
    if not sections:
        if old is not None:
            target.unlink()
        return old is not None
    new = render(file, sections)
    if new != old:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(new, encoding="utf-8")
    return new != old


def script_body(stdout: str, code: int, stderr: str) -> str:
    """A script's recorded output: stdout, then the exit status and the exception, if it failed."""
    if code == 0:
        return stdout
    return stdout + f"[failed] {last_exception(stderr)}\n"


def last_exception(stderr: str) -> str:
    """The last line of the last traceback in stderr ("AttributeError: ..."), or its last line."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Interrupt|Exit)\b", line)]
    last = (errors or lines or ["(nothing on stderr)"])[-1]
    return re.sub(r"(?<![\w.])/[^\s'\"]*/site-packages/", "...", last)[:300]  # not this machine's paths


def differing_lines(pinned: str, other: str) -> list[str]:
    """The lines that differ, as a unified diff without context: '-' the page, '+' the release."""
    diff = difflib.unified_diff(pinned.splitlines(), other.splitlines(), lineterm="", n=0)
    return [line for line in list(diff)[2:] if not line.startswith("@@")]
