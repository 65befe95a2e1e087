"""The build's caches on disk, in .cache/ (not in git): what one `mkdocs build` kept for the next,
a pickle per language pass. tools/site/highlight_cache.py keeps highlighted code blocks here,
tools/site/search_text.py jieba's cuts of the Chinese text."""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / ".cache"


def load(pattern: str, folder: Path = STORE) -> list:
    """What each file matching `pattern` holds; a damaged one is left out (only a slower build)."""
    found = []
    for path in folder.glob(pattern):
        try:
            found.append(pickle.loads(path.read_bytes()))
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            pass
    return found


def save(name: str, data, folder: Path = STORE) -> None:
    """Write folder/name atomically: the other language's pass may read it at any time."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}-")
    with os.fdopen(handle, "wb") as file:
        pickle.dump(data, file)
    os.replace(temporary, folder / name)
