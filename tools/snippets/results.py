"""The torch matrix's results as the rest of the guide reads them.

`make matrix` (or CI's matrix workflow) runs every snippet on every tracked release and records,
per release, a digest of each snippet's files as it ran them (snippets/compatibility/results.json).
A snippet whose files have changed since, or that is new, has no result for what it is now: it is
*pending* on that release until the matrix runs again. Pages vouch only for what ran: a page with
a pending example names the pinned release only (on which the tests run every example) and says
the example is pending the matrix (tools/site/page_status.py).

Standard library only: the site build reads it too.
"""

from __future__ import annotations

import hashlib
import json

from tools.snippets import releases
from tools.snippets.model import SNIPPETS, find

FOLDER = SNIPPETS / "compatibility"
RESULTS = FOLDER / "results.json"
VERIFIED = FOLDER / "verified.json"


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {"versions": [], "runs": {}}


def digest(name: str, version: str) -> str:
    """A snippet's files as the matrix ran them on `version`: <name>.md, or <name>.py and its
    <name>.out, and what <folder>/releases/<name>.md records for that release, if anything (a
    recording of another release does not change this one's result). Files are read through
    releases.read_bytes, which reads each again only when it changed: compat asks for every
    snippet's digest on every release, over and over (145,000 in one test session)."""
    sha = hashlib.sha256()
    for suffix in (".md", ".py", ".out"):
        path = find(name, suffix)
        data = None if path is None else releases.read_bytes(path)
        if data is not None:
            sha.update(suffix.encode() + b"\0" + data)
    recorded = releases.for_release(name, version)
    if recorded is not None:
        sha.update(b"releases\0" + recorded.kind.encode() + b"\0" + recorded.body.encode())
    return sha.hexdigest()[:16]


def is_pending(data: dict, version: str, name: str) -> bool:
    """No result on `version` for the snippet as it is now: new, or changed since that run."""
    run = data["runs"].get(version, {})
    return name not in run.get("ran", ()) or run.get("digests", {}).get(name) != digest(name, version)


def pending(data: dict, names: list[str]) -> dict[str, list[str]]:
    """Snippet -> the releases of the results on which it is pending; only the pending ones."""
    found = {name: [v for v in data["versions"] if is_pending(data, v, name)] for name in names}
    return {name: versions for name, versions in found.items() if versions}
