"""Version gates: the torch releases on which a snippet's page output does not hold
(snippets/versions.toml)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.snippets.model import SNIPPETS

# --- Version gates: where a snippet's output holds on some torch releases only ------------------

VERSION_GATES = SNIPPETS / "versions.toml"


@dataclass(frozen=True)
class Gate:
    """snippets/versions.toml entry: the releases on which the page's output does not hold.

    since = "X.Y": it holds from X.Y on; before = "X.Y": up to, not including, X.Y;
    differs_on = ["X.Y", ...]: not on these releases (a difference that came and went).
    varies_on = ["X.Y", ...]: on these releases the output changes from run to run (the page says
    how); a run that differs there is reported as such (an expected failure, never a pass).
    """

    name: str
    why: str
    since: str | None = None
    before: str | None = None
    differs_on: tuple[str, ...] = ()
    warns: str | None = None  # outside since/before: same output, plus this warning from torch
    varies_on: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "differs_on", tuple(self.differs_on))
        object.__setattr__(self, "varies_on", tuple(self.varies_on))
        if not (self.since or self.before or self.differs_on):
            raise ValueError(f"snippets/versions.toml [{self.name}]: give since, before or differs_on")

    def excludes(self, release: tuple[int, int]) -> bool:
        """True on a torch release where the snippet is expected to print something else."""
        since = _release(self.since) if self.since else None
        before = _release(self.before) if self.before else None
        return bool(
            (since and release < since)
            or (before and release >= before)
            or release in {_release(v) for v in self.differs_on}
        )

    def warns_on(self, release: tuple[int, int]) -> bool:
        """True where the page's output holds with the `warns` warning beside it: a release that
        since/before exclude. A release in differs_on is compared with its recording instead."""
        return bool(self.warns) and self.excludes(release) and release not in {_release(v) for v in self.differs_on}

    def varies(self, release: tuple[int, int]) -> bool:
        """True on a release where the output changes from run to run (the page says how)."""
        return release in {_release(v) for v in self.varies_on}

    @property
    def releases(self) -> list[str]:
        """The releases the page must name next to the snippet."""
        return [v for v in (self.since, self.before) if v] + list(self.differs_on)

    @property
    def label(self) -> str:
        parts = []
        if self.since:
            parts.append(f"torch {self.since}+")
        if self.before:
            parts.append(f"before torch {self.before}")
        if self.differs_on:
            parts.append("differs on torch " + ", ".join(self.differs_on))
        if self.varies_on:
            parts.append("varies from run to run on torch " + ", ".join(self.varies_on))
        return "; ".join(parts)


def _release(version: str) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor)


def version_gates() -> dict[str, Gate]:
    import tomllib

    if not VERSION_GATES.exists():
        return {}
    table = tomllib.loads(VERSION_GATES.read_text(encoding="utf-8"))
    return {name: Gate(name, **fields) for name, fields in table.items()}


def torch_release() -> tuple[int, int]:
    import torch

    return _release(torch.__version__)
