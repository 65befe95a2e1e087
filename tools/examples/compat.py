"""Turn the torch version matrix's results into the compatibility page's data.

    python -m tools.examples.compat          # reads build/matrix/<version>.xml (written by `make matrix`)
    python -m tools.examples.compat --stored # redraws from the committed results (make outputs)

Writes snippets/compatibility/results.json (versions, dates, per snippet: passed or failed on
each version, with the first failing line, and a digest of the snippet's files as they were run),
the table rows the compatibility page includes: pages.md (per page of the guide) and snippets.md
(per snippet), and verified.json: per page, the releases its examples passed on, which the page
shows under its title ("Verified on torch 2.4.1–2.15.0"; tools/site/page_status.py). A version missing
from build/matrix keeps its previous results, so one version can be re-run alone. A snippet that
is new or changed since a release ran is pending there (tools/snippets/results.py): marked … in
the tables, left out of its page's range, and named on the page as pending the matrix.

Only the standard library: the matrix workflow runs this without installing the project.
"""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tools.snippets import find, is_snippet, releases, script_paths, snippet_paths
from tools.snippets.results import RESULTS as DATA, VERIFIED, digest, is_pending
from tools.snippets.torch_releases import TRACKED

ROOT = Path(__file__).resolve().parents[2]
DOCS, SNIPPETS = ROOT / "docs", ROOT / "snippets"
MATRIX = ROOT / "build" / "matrix"
OUT = SNIPPETS / "compatibility"

# The order of the page's columns: the reference, then newest to oldest (pyproject.toml's one list).
VERSIONS = TRACKED
INCLUDE = re.compile(r'^--8<-- "(?P<name>[^"]+)"', re.MULTILINE)
EXAMPLE = re.compile(r"\[(?P<file>(?:snippets|docs)/[^\]:\s]+)(?::(?P<line>\d+))?")
RECORDED = re.compile(r"\(differs on torch [^)]*snippets/[^)]*releases/[^)]*\)")


def snippet_names() -> list[str]:
    """Every snippet: snippets/<folder>/<name>.md (doctests), then <name>.py (scripts)."""
    return sorted(p.stem for p in snippet_paths()) + sorted(p.stem for p in script_paths())


def _relative(message: str) -> str:
    """A failure message without the path of the checkout that ran it."""
    return re.sub(r"(?<![\w.])/[^\s'\"]*?/(?=(?:snippets|docs)/)", "", message)


def read_run(path: Path) -> dict:
    """One version's JUnit file -> its date, duration and, per snippet, the first failing line."""
    suite = ET.parse(path).getroot().find("testsuite")
    failed: dict[str, str] = {}
    gated: dict[str, str] = {}  # expected to differ on this release (snippets/versions.toml)
    seen: set[str] = set()
    for case in suite.iter("testcase"):
        match = EXAMPLE.search(case.get("name", ""))
        if match is None:
            key = "benchmark_relations" if "test_benchmark" in case.get("classname", "") else None
            line = case.get("name")
        else:
            key = Path(match["file"]).stem if match["file"].startswith("snippets/") else match["file"]
            line = match["line"] or ""
        if key is None:
            continue
        seen.add(key)
        skipped = case.find("skipped")
        if skipped is not None and skipped.get("type") == "pytest.xfail":
            message = (skipped.get("message") or "").strip()
            if message.startswith("varies from run to run"):  # this run differed: ✗, as the page says
                failed.setdefault(key, f"{line}: {_relative(message.splitlines()[0])[:160]}".strip(": "))
            else:
                gated[key] = message
            continue
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        if problem is not None and key not in failed:
            message = (problem.get("message") or "").strip().splitlines()
            failed[key] = f"{line}: {_relative(message[0])[:160] if message else ''}".strip(": ")
        elif problem is None and RECORDED.search(case.get("name", "")):  # printed what this release recorded
            gated[key] = RECORDED.search(case.get("name", ""))[0].strip("()")
    return {
        "date": suite.get("timestamp", "")[:10],
        "seconds": round(float(suite.get("time", 0))),
        "tests": int(suite.get("tests", 0)),
        "failed": {key: failed[key] for key in sorted(failed)},
        "gated": {key: gated[key] for key in sorted(gated)},
        "ran": sorted(seen),
        "digests": ran_digests(path, sorted(name for name in seen if "/" not in name)),
    }


def ran_digests(junit: Path, names: list[str]) -> dict[str, str]:
    """The digests of the snippets as the run ran them: <version>.digests.json, which the nox
    session writes right after its tests (noxfile.py). Without it (a run from before), the files
    as they are now, which holds only if nothing changed since the run."""
    written = junit.with_suffix(".digests.json")
    if written.exists():
        ran = json.loads(written.read_text(encoding="utf-8"))
        return {name: ran[name] for name in names if name in ran}
    return {name: digest(name, junit.stem) for name in names}


CHECKER_RUNS = {"pins": "the pinned libraries", "torch-numpy": "torch and numpy only"}
SUMMARY = re.compile(r"Snippets: (?P<passed>\d+) passed, (?P<differ>\d+) differ, (?P<declared>\d+) differ as "
                     r"their pages say, (?P<not_run>\d+) not run(?:, (?P<varies>\d+) var(?:y|ies) from run to run)?")


def read_checker(path: Path) -> dict:
    """What check_guide.py printed on a release (noxfile.py): its exit status and its counts."""
    text = path.read_text(encoding="utf-8")
    status = re.findall(r"^exit status (-?\d+)$", text, re.MULTILINE)
    counts = SUMMARY.search(text)
    return {"exit": int(status[-1]) if status else None,
            **({k: int(v or 0) for k, v in counts.groupdict().items()} if counts else {})}


def merge_partial(previous: dict, run: dict) -> dict:
    """A run of some snippets only (MATRIX_PENDING=1, noxfile.py) merged into the release's last
    full run: their results replace theirs, every other snippet keeps its own; the date, counts
    and the checker's results stay the full run's."""
    ran = set(run["ran"])
    merged = dict(previous)
    for key in ("failed", "gated"):
        kept = {k: v for k, v in previous.get(key, {}).items() if k not in ran}
        merged[key] = dict(sorted({**kept, **run[key]}.items()))
    merged["ran"] = sorted(set(previous.get("ran", ())) | ran)
    merged["digests"] = dict(sorted({**previous.get("digests", {}), **run["digests"]}.items()))
    return merged


def collect(stored: bool = False) -> dict:
    """The committed results, updated with each release's run under build/matrix/ (none with
    `stored`: a contributor's old runs there must not overwrite newer committed results)."""
    data = json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() else {"runs": {}}
    for version in VERSIONS:
        path = MATRIX / f"{version}.xml"
        if path.exists() and not stored:
            run, previous = read_run(path), data["runs"].get(version)
            partial = path.with_suffix(".partial").exists()  # MATRIX_PENDING=1: only what was pending
            data["runs"][version] = merge_partial(previous, run) if partial and previous else run
            checks = {label: read_checker(MATRIX / f"{version}.checker-{label}.txt") for label in CHECKER_RUNS
                      if (MATRIX / f"{version}.checker-{label}.txt").exists()}
            if checks:
                data["runs"][version]["checker"] = checks
    data["versions"] = [v for v in VERSIONS if v in data["runs"]]
    data["runs"] = {v: data["runs"][v] for v in data["versions"]}
    return data


@functools.lru_cache(maxsize=1)
def _includes() -> dict[str, set[str]]:
    """English page (docs/**/*.md and notebooks, no .zh) -> the snippet files it includes (a
    notebook's code cells name theirs in their metadata: tools/generate/notebook.py)."""
    found = {page.relative_to(DOCS).as_posix(): {Path(include).name for include in INCLUDE.findall(
                 page.read_text(encoding="utf-8")) if Path(include).suffix in {".md", ".py"}
                 and is_snippet(SNIPPETS / include)}
             for page in sorted(DOCS.rglob("*.md")) if ".zh." not in page.name}
    for notebook in sorted(DOCS.rglob("*.ipynb")):
        if ".zh." not in notebook.name:
            cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
            found[notebook.relative_to(DOCS).as_posix()] = {
                cell["metadata"]["snippet"] + ".md" for cell in cells if "snippet" in cell.get("metadata", {})}
    return found


def pages_including(name: str) -> list[str]:
    """English pages (docs/**/*.md, no .zh) that include snippets/<name>.md or .py."""
    return [page for page, names in _includes().items() if {f"{name}.md", f"{name}.py"} & names]


def status(data: dict, version: str, name: str) -> str:
    """✓ the page's output, ≠ the output the page declares for this release, ✗ failed, … pending:
    the matrix has not run the snippet as it is now (new, or changed since)."""
    run = data["runs"][version]
    if is_pending(data, version, name):
        return "…"
    if name in run["failed"]:
        return "✗"
    return "≠" if name in run.get("gated", {}) else "✓"
_status = status  # verified() asks each (release, snippet) once


def nav_order() -> list[str]:
    """The pages in mkdocs.yml's nav order."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s+- (?:[^:\n]+: )?([\w/.-]+\.md)\s*$", nav, re.MULTILINE)


def page_rows(data: dict) -> str:
    by_page: dict[str, list[str]] = {}
    for name in snippet_names():
        for page in pages_including(name):
            by_page.setdefault(page, []).append(name)
    order = nav_order()
    lines = []
    for page, names in sorted(by_page.items(), key=lambda item: (
            order.index(item[0]) if item[0] in order else len(order), item[0])):
        cells = []
        for version in data["versions"]:
            marks = [status(data, version, n) for n in names]
            failing, differing, waiting = marks.count("✗"), marks.count("≠"), marks.count("…")
            cell = f"✗ {failing}/{len(names)}" if failing else "✓"
            cells.append(cell + (f" ≠ {differing}" if differing else "") + (f" … {waiting}" if waiting else ""))
        link = f"[{Path(page).stem}]({page})"
        lines.append(f"| {link} | {len(names)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def snippet_rows(data: dict) -> str:
    lines = []
    for name in snippet_names():
        cells = [status(data, version, name) for version in data["versions"]]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_rows(data: dict) -> str:
    lines = []
    for version in data["versions"]:
        run = data["runs"][version]
        passed = sum(status(data, version, n) == "✓" for n in snippet_names())
        checks = [checker_cell(run.get("checker", {}).get(label)) for label in CHECKER_RUNS]
        lines.append(f"| {version} | {run['date']} | {run['tests']} | {passed} | "
                     f"{len(run.get('gated', {}))} | {len(run['failed'])} | {run['seconds']} | "
                     + " | ".join(checks) + " |")
    return "\n".join(lines) + "\n"


def checker_cell(check: dict | None) -> str:
    """'exit 0: 150 ✓ 12 ≠ 0 ✗ 30 ○' (passed, differ as the page says, differ, not run)."""
    if not check:
        return "—"
    return (f"exit {check['exit']}: {check.get('passed', '?')} ✓ {check.get('declared', '?')} ≠ "
            f"{check.get('differ', '?')} ✗ {check.get('not_run', '?')} ○")


def spans(versions: list[str], among: list[str]) -> str:
    """'2.4.1–2.15.0', or '2.4.1–2.6.0, 2.11.0–2.15.0' where a tested release in between is
    missing: ranges of consecutive releases of the matrix (`among`, any order)."""
    ordered = sorted(among, key=lambda v: tuple(int(p) for p in v.split(".")))
    runs: list[list[str]] = []
    for version in ordered:
        if version not in versions:
            runs.append([])
        elif runs and runs[-1]:
            runs[-1].append(version)
        else:
            runs.append([version])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs if r)


def verified(data: dict, previous: dict | None = None) -> dict:
    """Per page with examples: the releases on which none of its examples failed and at least one
    printed the page's output; the tested releases where its examples printed something else (the
    page says what: snippets/versions.toml) or failed; the date of the newest of those runs; and,
    for each example that passed on fewer releases, the releases it passed on itself. The home
    page speaks for the whole guide: the releases on which no example of any page failed.

    Examples the matrix has not run as they are now are left out of those figures and listed as
    `pending`: the page then vouches for the pinned release only. A page's date moves only when
    its entry changes: regenerating from the same results, or a run that changes nothing for the
    page, keeps the date it had (`previous`, by default the committed verified.json)."""
    if previous is None:
        previous = json.loads(VERIFIED.read_text(encoding="utf-8")) if VERIFIED.exists() else {}
    by_page: dict[str, list[str]] = {}
    for name in (every := snippet_names()):
        for page in pages_including(name):
            by_page.setdefault(page, []).append(name)
    waiting = {name for name in every if any(is_pending(data, v, name) for v in data["versions"])}
    once = functools.cache(lambda version, name: _status(data, version, name))  # the home page asks for all
    status = lambda _, version, name: once(version, name)  # noqa: E731
    result = {}
    for page in sorted(by_page):
        pending = [n for n in by_page[page] if n in waiting]
        names = [n for n in by_page[page] if n not in waiting]
        passed = {name: [v for v in data["versions"] if status(data, v, name) == "✓"] for name in names}
        if page == "index.md":
            everything = [n for n in every if n not in waiting]
            releases = [v for v in data["versions"] if all(status(data, v, n) in "✓≠" for n in everything)]
        else:
            releases = [v for v in data["versions"]
                        if all(status(data, v, n) in "✓≠" for n in names) and any(v in passed[n] for n in names)]
        failing = [v for v in data["versions"] if any(status(data, v, n) == "✗" for n in names)]
        result[page] = {
            "releases": spans(releases, data["versions"]),
            "count": len(releases),
            "tested": len(data["versions"]),
            "date": max((data["runs"][v]["date"] for v in releases), default=""),
            "differs": spans([v for v in data["versions"] if v not in releases and v not in failing],
                             data["versions"]),
            "fails": spans(failing, data["versions"]),
            "total": len(names) + len(pending),
            "examples": {n: spans(passed[n], data["versions"]) for n in names
                         if set(passed[n]) != set(releases)},
            "pending": pending,
            "pinned": VERSIONS[0],
        }
        if page == "index.md":
            result[page]["guide"] = len(everything) + len(waiting)
            result[page]["pending"] = sorted(waiting)
        old = previous.get(page)
        if old and {k: v for k, v in old.items() if k != "date"} == {k: v for k, v in result[page].items() if k != "date"}:
            result[page]["date"] = old["date"]
    return result


def pinned_output(name: str) -> str:
    """What the page shows: a doctest snippet's expected outputs, or a script's .out."""
    script = find(name, ".out")
    if script is not None:
        return script.read_text(encoding="utf-8")
    text = find(name).read_text(encoding="utf-8")
    fence = re.search(r"^```pycon[^\n]*\n(?P<body>.*?)^```", text, re.MULTILINE | re.DOTALL)
    return releases.Section([], "pycon", fence["body"]).output()


def difference_rows() -> str:
    """Per gated snippet and recorded release output: the lines that differ from the page's
    ('-' the page, '+' the release), from each folder's releases/ (tools/snippets/releases.py)."""
    parts = []
    for name in snippet_names():
        sections = releases.load(name)
        if not sections:
            continue
        page = (pages_including(name) or [""])[0]
        link = f"[`{name}`]({page})" if page else f"`{name}`"
        pinned = pinned_output(name)
        for section in sorted(sections, key=lambda s: min(releases.release(v) for v in s.releases)):
            lines = releases.differing_lines(pinned, section.output())
            head = f"{link} · torch {', '.join(section.releases)}"
            # no empty block: its copy button would copy nothing
            parts.append(f"{head}\n\n```text\n" + "".join(line + "\n" for line in lines) + "```\n" if lines
                         else f"{head}: no printed line differs from the page's\n")
    return "\n".join(parts)


def render(data: dict) -> dict[Path, str]:
    return {
        OUT / "differences.md": difference_rows(),
        OUT / "runs.md": run_rows(data),
        OUT / "pages.md": page_rows(data),
        OUT / "snippets.md": snippet_rows(data),
        OUT / "verified.json": json.dumps(verified(data), indent=1, ensure_ascii=False) + "\n",
    }


PAGES = [DOCS / "compatibility.md", DOCS / "compatibility.zh.md"]
RELEASE_CELL = re.compile(r"\d+\.\d+\.\d+")


def with_release_columns(text: str, versions: list[str]) -> str:
    """The pages' table headers list the releases measured, in the data's order."""
    lines = text.split("\n")
    for index, line in enumerate(lines[:-1]):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if not any(RELEASE_CELL.fullmatch(c) for c in cells):
            continue
        labels = [c for c in cells if not RELEASE_CELL.fullmatch(c)]
        indent = line[: len(line) - len(line.lstrip())]
        lines[index] = indent + "| " + " | ".join(labels + versions) + " |"
        lines[index + 1] = indent + "|" + "---|" * (len(labels) + len(versions))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stored", action="store_true",
                        help="redraw from the committed results only, ignoring build/matrix/ (make outputs)")
    stored = parser.parse_args(argv).stored
    data = collect(stored=stored)
    for page in PAGES:
        page.write_text(with_release_columns(page.read_text(encoding="utf-8"), data["versions"]),
                        encoding="utf-8")
    OUT.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not stored:
        print(f"wrote {DATA.relative_to(ROOT)}: {', '.join(data['versions'])}")
    for path, content in render(data).items():
        changed = not path.exists() or path.read_text(encoding="utf-8") != content
        path.write_text(content, encoding="utf-8")
        if changed or not stored:
            print(f"wrote {path.relative_to(ROOT)}")
    if stored:  # make outputs: what a contributor needs to know is what is pending
        pending = verified(data).get("index.md", {}).get("pending", [])
        print(f"pending the matrix (new or changed since it ran): {', '.join(pending) or 'nothing'}")
        return 0
    for version in data["versions"]:
        run = data["runs"][version]
        print(f"  {version:<11} {run['tests']} tests, {len(run['failed'])} snippets failing, "
              f"{run['seconds']} s: {', '.join(run['failed']) or 'all pass'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
