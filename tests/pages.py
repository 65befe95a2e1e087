"""The guide's pages and their Chinese twins, as the structural and site tests see them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tools.generate.notebook import OUTLINES
from tools.snippets import DOCS, ROOT, SNIPPETS, Snippet, find, is_snippet

INCLUDE = re.compile(r'^--8<-- "(?P<name>[^"]+)"\s*$', re.MULTILINE)
HEADING = re.compile(r"^(?P<level>#{2,6}) (?P<text>.+?)\s*$", re.MULTILINE)
ANCHOR = re.compile(r"\{\s*#(?P<id>[\w-]+)\s*\}$")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
# An exception or warning as Python prints it: the line readers paste into the search box.
ERROR_LINE = re.compile(r"^(?:[\w.]*\.)?[A-Z]\w*(?:Error|Warning|Exception|Unsupported)\b: .+$", re.MULTILINE)
# The same, quoted whole in the prose (a version note's older wording): ``RuntimeError: …``
QUOTED_ERROR = re.compile(r"``((?:[\w.]*\.)?[A-Z]\w*(?:Error|Warning|Exception|Unsupported)\b: [^`\n]+)``")


@dataclass(frozen=True)
class Source:
    """A page (docs/*.md, docs/*.ipynb) or a notebook outline (tools/generate/notebooks/*.md)."""

    path: Path

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def is_zh(self) -> bool:
        return ".zh." in self.path.name

    @property
    def twin(self) -> Path:
        name = self.path.name
        other = name.replace(".zh.", ".") if self.is_zh else name.replace(".", ".zh.", 1)
        return self.path.with_name(other)

    @property
    def is_notebook(self) -> bool:
        """Notebook Markdown is rendered by nbconvert, which has no { #anchor } syntax."""
        return self.path.suffix == ".ipynb" or self.path.parent == OUTLINES

    @property
    def text(self) -> str:
        raw = self.path.read_text(encoding="utf-8")
        if self.path.suffix == ".ipynb":
            cells = json.loads(raw)["cells"]
            return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        return raw

    def includes(self) -> list[str]:
        if self.path.suffix == ".ipynb":
            cells = json.loads(self.path.read_text(encoding="utf-8"))["cells"]
            names = [c["metadata"]["snippet"] for c in cells if c["cell_type"] == "code"]
            return [found.relative_to(SNIPPETS).as_posix() if (found := find(n)) else f"{n}.md" for n in names]
        return INCLUDE.findall(self.text)

    def shown_errors(self) -> list[str]:
        """Every error or warning line the page's examples print (their outputs and .out files)."""
        found = []
        for include in self.includes():
            path = SNIPPETS / include
            if path.suffix == ".out":
                output = path.read_text(encoding="utf-8")
            elif path.suffix == ".md" and path.is_file() and is_snippet(path):
                output = Snippet.load(path).expected_output()
            else:
                continue
            found += [line for line in ERROR_LINE.findall(output) if line not in found]
        return found

    def quoted_errors(self) -> list[str]:
        """Every error or warning line the prose quotes whole, on one line (older wordings)."""
        return QUOTED_ERROR.findall(FENCED.sub("", self.text))

    def headings(self) -> list[tuple[str, str]]:
        """(heading line, anchor or '') for each level 2-6 heading outside code fences."""
        prose = FENCED.sub("", self.text)
        found = []
        for match in HEADING.finditer(prose):
            anchor = ANCHOR.search(match["text"])
            found.append((match.group(0).strip(), anchor["id"] if anchor else ""))
        return found

    def prose(self) -> str:
        """Text a translator writes: no code fences, inline code, includes or front matter."""
        text = re.sub(r"\A---\n.*?\n---\n", "", self.text, flags=re.DOTALL)
        text = FENCED.sub("", text)
        text = INCLUDE.sub("", text)
        return re.sub(r"`[^`\n]*`", "", text)


def pages() -> list[Source]:
    found = [
        p for p in sorted(DOCS.rglob("*"))
        if p.suffix in {".md", ".ipynb"} and "overrides" not in p.relative_to(DOCS).parts
    ]
    return [Source(p) for p in found]


def outlines() -> list[Source]:
    return [Source(p) for p in sorted(OUTLINES.glob("*.md"))]


def site_path(page: Source, site: Path) -> Path:
    """Where the build writes a page: docs/a/b.zh.md -> site/zh/a/b/index.html."""
    rel = page.path.relative_to(DOCS)
    stem = rel.name.split(".")[0]
    parts = list(rel.parent.parts) + ([] if stem == "index" else [stem])
    return site.joinpath(*(["zh"] if page.is_zh else []), *parts, "index.html")
