"""Which Chinese pages are behind their English page, from git history.

    make translation-status                 # or: python -m tools.site.translation_status
    python -m tools.site.translation_status --all  # every pair, up to date or not

For each docs/<page>.zh.md (and .zh.ipynb) it finds the last commit that changed the Chinese page,
then the commits since then that changed the English page. A page is listed when there are any;
`git diff <that commit> -- <English page>` shows what to carry over. Uncommitted changes to an
English page count too. Only the standard library and git: it runs without the project's venv.
Exit status 0 either way: it informs translators, it is not a check.
"""

from __future__ import annotations

import argparse
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


@dataclass
class Pair:
    chinese: str           # docs/...zh.md, relative to the repository
    english: str
    translated_at: str     # the last commit that changed the Chinese page ("" if never committed)
    since: list[str]       # commits changing the English page after it: "abc1234 2026-11-20 subject"
    uncommitted: bool      # the English page has changes not committed yet

    @property
    def behind(self) -> bool:
        return bool(self.since) or self.uncommitted or not self.translated_at


def pairs(root: Path = ROOT) -> list[Pair]:
    found = []
    for chinese in sorted((root / "docs").rglob("*.zh.*")):
        if chinese.suffix not in {".md", ".ipynb"}:
            continue
        english = chinese.with_name(chinese.name.replace(".zh.", "."))
        zh, en = (p.relative_to(root).as_posix() for p in (chinese, english))
        if not english.exists():
            continue
        last = git(root, "log", "-1", "--format=%H", "--", zh)
        since = git(root, "log", "--format=%h %ad %s", "--date=short", f"{last}..HEAD", "--", en).splitlines() if last else []
        uncommitted = bool(git(root, "status", "--porcelain", "--", en))
        found.append(Pair(zh, en, last, since, uncommitted))
    return found


def report(found: list[Pair], show_all: bool = False) -> str:
    lines = []
    for pair in found:
        if not (pair.behind or show_all):
            continue
        if not pair.translated_at:
            lines.append(f"{pair.chinese}: never committed")
            continue
        state = f"{len(pair.since)} English commit(s) since it was last translated" if pair.behind else "up to date"
        lines.append(f"{pair.chinese}: {state} (at {pair.translated_at[:7]})")
        lines += [f"    {commit}" for commit in pair.since]
        if pair.uncommitted:
            lines.append(f"    {pair.english} has uncommitted changes")
        if pair.since:
            lines.append(f"    see: git diff {pair.translated_at[:7]} -- {pair.english}")
    behind = sum(pair.behind for pair in found)
    lines.append(f"{behind} of {len(found)} Chinese pages are behind their English page.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="list the pages that are up to date too")
    print(report(pairs(), show_all=parser.parse_args().all))


if __name__ == "__main__":
    main()
