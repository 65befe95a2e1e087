"""The newest torch on the package index, before anyone pins it (.github/workflows/newest-torch.yml).

    python -m tools.examples.newest_torch resolve    # the newest torch and the torchvision that goes with it
    python -m tools.examples.newest_torch report     # what differs there, example by example (exit 1)

`resolve` asks uv which torch and torchvision a plain `pip install torch torchvision` gets today,
from whatever index this machine is set up for (no index is named here), and says whether the
one list (pyproject.toml, [tool.guide.torch]) tracks that torch; NEWEST_TRACKED=X.Y.Z pretends the
newest tracked release is X.Y.Z (how the workflow's steps are tried on a machine where the list
already tracks the newest). Under GitHub Actions it writes torch=, torchvision= and tracked= to
$GITHUB_OUTPUT.

`report` reads what `nox -s newest` left in build/newest/ (the doc-tests' JUnit file and what the
reader's check_guide.py printed, both ways) and writes build/newest/report.md: each example whose
output differs there with its first differing line, and the checker's counts. Under GitHub Actions
it is the job summary too. It exits 1 while the release is not tracked, so that a maintainer sees
the red run: tracking it (`make upgrade`, or adding it to the list) is their decision.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from tools.snippets.torch_releases import TORCHVISION, key

ROOT = Path(__file__).resolve().parents[2]
NEWEST = ROOT / "build" / "newest"


def resolve_pair(constraint: str = "torch") -> tuple[str, str]:
    """(torch, torchvision) as the index resolves `constraint` with torchvision, for Python 3.11."""
    result = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "compile", "-", "--python-version", "3.11",
         "--no-header", "--no-annotate", "--quiet"],
        input=f"{constraint}\ntorchvision\n", capture_output=True, text=True, check=False)
    pins = dict(re.findall(r"^(torch|torchvision)==(\S+)$", result.stdout, re.MULTILINE))
    if result.returncode != 0 or set(pins) != {"torch", "torchvision"}:
        sys.exit(f"could not resolve torch and torchvision from the index:\n{result.stderr.strip()}")
    return pins["torch"], pins["torchvision"]


def newest_tracked() -> str:
    return os.environ.get("NEWEST_TRACKED") or max(TORCHVISION, key=key)


def is_tracked(torch: str) -> bool:
    return key(torch) <= key(newest_tracked()) if os.environ.get("NEWEST_TRACKED") else torch in TORCHVISION


def resolve() -> int:
    torch, torchvision = resolve_pair()
    tracked = is_tracked(torch)
    print(f"newest torch on the index: {torch} (torchvision {torchvision}); newest tracked: "
          f"{newest_tracked()}; {'tracked' if tracked else 'not tracked yet'}")
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as out:
            out.write(f"torch={torch}\ntorchvision={torchvision}\ntracked={str(tracked).lower()}\n")
    return 0


def report(folder: Path = NEWEST) -> tuple[str, int]:
    """The report's Markdown and the exit status (1: a release that is not tracked yet)."""
    from tools.examples.compat import read_checker, read_run

    runs = sorted(folder.glob("*.xml"), key=lambda p: key(p.stem))
    if not runs:
        return f"No results in {folder.relative_to(ROOT)}: run `nox -s newest` first.\n", 1
    junit = runs[-1]
    torch = junit.stem
    run = read_run(junit)
    lines = [f"# torch {torch}, not tracked yet: what differs from the guide's pages\n",
             f"{run['tests']} doc-tests ran in {run['seconds']} s: {len(run['failed'])} example(s) print "
             f"something else on torch {torch}, {len(run['gated'])} differ as their pages say.\n"]
    if run["failed"]:
        lines.append("| example | first differing line |\n|---|---|")
        lines += ["| `{}` | {} |".format(name, line.replace("|", "\\|")) for name, line in run["failed"].items()]
        lines.append("")
    for way, label in (("pins", "with the pinned libraries"), ("torch-numpy", "with torch and numpy only")):
        path = folder / f"{torch}.checker-{way}.txt"
        if path.exists():
            found = read_checker(path)
            lines.append(f"- check_guide.py {label}: exit status {found.get('exit')}, "
                         f"{found.get('passed', '?')} passed, {found.get('differ', '?')} differ, "
                         f"{found.get('declared', '?')} differ as their pages say, {found.get('not_run', '?')} not run")
        else:
            lines.append(f"- check_guide.py {label}: did not run (the doc-tests' session stopped first)")
    lines.append(f"\nTo track it: `make upgrade TORCH={torch}` (CONTRIBUTING.md, \"Upgrade torch\"), "
                 "or add it to pyproject.toml's [tool.guide.torch] list and run the matrix.\n")
    return "\n".join(lines), 0 if is_tracked(torch) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["resolve", "report"])
    args = parser.parse_args(argv)
    if args.step == "resolve":
        return resolve()
    text, status = report()
    NEWEST.mkdir(parents=True, exist_ok=True)
    (NEWEST / "report.md").write_text(text, encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write(text)
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
