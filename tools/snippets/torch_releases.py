"""The torch releases the guide tracks, read from their one list: [tool.guide.torch] in pyproject.toml.

    python -m tools.snippets.torch_releases            # the tracked releases, one per line
    python -m tools.snippets.torch_releases --json     # the same as a JSON list (the matrix workflow's first job)
    python -m tools.snippets.torch_releases --pinned   # the pin

PINNED is the release every page's output comes from; TRACKED the matrix's releases in the
compatibility page's column order (the pin, then newest to oldest); TORCHVISION the torchvision
release built for each. Standard library only: the matrix workflow reads it without installing
the project.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def key(version: str) -> tuple[int, ...]:
    """'2.10.0' -> (2, 10, 0): releases sort as numbers, not strings."""
    return tuple(int(part) for part in version.split("."))


def read(path: Path = PYPROJECT) -> tuple[str, list[str], dict[str, str]]:
    """(pin, tracked releases in column order, torchvision for each) from `path`."""
    table = tomllib.loads(path.read_text(encoding="utf-8"))["tool"]["guide"]["torch"]
    pinned, torchvision = table["pinned"], dict(table["torchvision"])
    if pinned not in torchvision:
        raise ValueError(f"{path.name} [tool.guide.torch]: the pin {pinned} is not among the tracked releases")
    others = sorted((v for v in torchvision if v != pinned), key=key, reverse=True)
    return pinned, [pinned, *others], torchvision


PINNED, TRACKED, TORCHVISION = read()


if __name__ == "__main__":
    if sys.argv[1:] == ["--json"]:
        print(json.dumps(TRACKED))
    elif sys.argv[1:] == ["--pinned"]:
        print(PINNED)
    else:
        print("\n".join(TRACKED))
