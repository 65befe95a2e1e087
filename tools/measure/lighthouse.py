"""Lighthouse scores of the built site: performance, accessibility, best practices, SEO.

    make lighthouse                                  # build, serve on 127.0.0.1, score every page
    python -m tools.measure.lighthouse --runs 1              # one run per page instead of the median of 3
    python -m tools.measure.lighthouse --pages home pitfalls retain-grad   # some pages, both languages
    python -m tools.measure.lighthouse --site site --port 8000  # score a build made for that address

Lighthouse (npm, version pinned below, run with npx) drives Debian's Chromium with its default
mobile profile (emulated phone, simulated slow 4G and 4x CPU slowdown). The pages: every page of
the built site (each index.html), in both languages. Each score is the median of --runs runs (3 by
default; Lighthouse's performance score moves by several points from run to run). The runs are
sequential: two Chromiums side by side would share the CPU and lower each other's scores.

Scores go to stdout and to build/lighthouse/scores.md (rewritten after each page, so a cut-short
run keeps what it measured), with each page's median metrics and the load average of the machine
while it was measured: the performance score falls when other work shares the CPU. The report of
each page's median run goes to build/lighthouse/<lang>-<page>.json. Scores are reported, never
asserted: they also vary with the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.dev.serve import CHROMIUM_FLAGS, Server, chromium_path, free_port

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "lighthouse"
LIGHTHOUSE = "lighthouse@13.5.0"
LANGUAGES = {"en": "", "zh": "zh/"}  # language -> its root in the built site
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
METRICS = {  # audit id -> column
    "first-contentful-paint": "FCP",
    "largest-contentful-paint": "LCP",
    "total-blocking-time": "TBT",
    "cumulative-layout-shift": "CLS",
    "speed-index": "SI",
}


def build(site: Path, url: str) -> None:
    env = {**os.environ, "SITE_URL": url, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)]
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def site_pages(site: Path) -> list[str]:
    """Every page of the default language, as its path from the language root ("" for the home
    page): each folder with an index.html outside the other languages' roots."""
    others = [root.rstrip("/") for root in LANGUAGES.values() if root]
    found = []
    for index in site.rglob("index.html"):
        path = index.parent.relative_to(site).as_posix()
        path = "" if path == "." else path + "/"
        if not any(path == o + "/" or path.startswith(o + "/") for o in others):
            found.append(path)
    return sorted(found, key=lambda p: (p != "", p))


def slug(path: str) -> str:
    return path.strip("/") or "home"


def select(pages: list[str], wanted: list[str]) -> list[str]:
    """The pages named by --pages: a slug ("techniques/retain-grad", "home") or its last part."""
    chosen = []
    for name in wanted:
        name = name.strip("/")
        hits = [p for p in pages if slug(p) == name or slug(p).rsplit("/", 1)[-1] == name]
        if not hits:
            sys.exit(f"--pages: no page {name!r}; the pages: {', '.join(slug(p) for p in pages)}")
        chosen += [p for p in hits if p not in chosen]
    return chosen


def score(url: str, report: Path) -> dict:
    """One Lighthouse run: the four category scores (0-100) and the metrics, or an 'error'."""
    flags = " ".join(["--headless=new", *CHROMIUM_FLAGS])
    done = subprocess.run(
        ["npx", "--yes", LIGHTHOUSE, url, "--quiet", "--output=json", f"--output-path={report}",
         f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={flags}"],
        env={**os.environ, "CHROME_PATH": chromium_path()}, capture_output=True, text=True,
    )
    if done.returncode != 0 or not report.exists():
        return {"error": (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]}
    result = json.loads(report.read_text(encoding="utf-8"))
    if result.get("runtimeError"):
        return {"error": result["runtimeError"].get("message", "runtime error")}
    scores = {name: result["categories"][name]["score"] for name in CATEGORIES}
    if None in scores.values():
        return {"error": "a category has no score"}
    run = {name: round(value * 100) for name, value in scores.items()}
    run.update({column: result["audits"][audit]["numericValue"] for audit, column in METRICS.items()})
    return run


def median_run(url: str, runs: int, report: Path) -> dict:
    """The median of each score and metric over `runs` runs; the median run's report kept."""
    results = []
    with tempfile.TemporaryDirectory(prefix="guide-lighthouse-run-") as folder:
        for i in range(runs):
            run = score(url, Path(folder) / f"{i}.json")
            if "error" not in run:
                results.append((run, Path(folder) / f"{i}.json"))
            else:
                print(f"    run {i + 1}: {run['error']}", file=sys.stderr)
        if not results:
            return {"error": "every run failed"}
        results.sort(key=lambda r: r[0]["performance"])
        shutil.copyfile(results[len(results) // 2][1], report)
    merged = {key: statistics.median(run[key] for run, _ in results) for key in results[0][0]}
    merged["runs"] = len(results)
    return merged


def failing_audits(report: Path) -> list[tuple[str, str]]:
    """(category, audit title) for each audit outside performance that lost points."""
    result = json.loads(report.read_text(encoding="utf-8"))
    found = []
    for name in CATEGORIES[1:]:
        for ref in result["categories"][name]["auditRefs"]:
            audit = result["audits"][ref["id"]]
            if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
                found.append((name, audit["title"]))
    return found


def _cell(result: dict | None) -> str:
    if result is None:
        return ""
    if "error" in result:
        return "failed"
    return " / ".join(f"{result[c]:g}" for c in CATEGORIES)


def table(pages: list[str], results: dict, loads: dict, runs: int, failing: dict) -> str:
    langs = list(LANGUAGES)
    version = LIGHTHOUSE.split("@")[1]
    lines = [
        f"Lighthouse {version}, mobile profile; each figure the median of {runs} run(s), "
        f"measured one after the other on {os.cpu_count()} CPU(s).",
        "",
        "Scores: performance / accessibility / best practices / SEO.",
        "",
        "| page | " + " | ".join(langs) + " |",
        "|---|" + "---|" * len(langs),
    ]
    for p in pages:
        lines.append(f"| {slug(p)} | " + " | ".join(_cell(results.get((lang, p))) for lang in langs) + " |")
    lowest = []
    for lang in langs:
        perf = [r["performance"] for (lg, _), r in results.items() if lg == lang and "error" not in r]
        if perf:
            lowest.append(f"{lang} {min(perf):g} ({sum(s < 95 for s in perf)} of {len(perf)} pages below 95)")
    lines += ["", "Lowest performance score: " + ", ".join(lowest) + "."]
    lines += [
        "",
        "Performance metrics (ms; CLS unitless) and the machine's 1-minute load average while the "
        "page was measured:",
        "",
        "| page | language | " + " | ".join(METRICS.values()) + " | load |",
        "|---|---|" + "---|" * len(METRICS) + "---|",
    ]
    for p in pages:
        for lang in langs:
            r = results.get((lang, p))
            if r is None or "error" in r:
                continue
            cells = [f"{r[c]:.3f}" if c == "CLS" else f"{r[c]:.0f}" for c in METRICS.values()]
            lines.append(f"| {slug(p)} | {lang} | " + " | ".join(cells) + f" | {loads[(lang, p)]} |")
    lines += ["", "Audits outside performance that lost points (median run):", ""]
    audits = [f"- {cat}: {title}: {', '.join(where)}" for (cat, title), where in sorted(failing.items())]
    lines += audits or ["- none"]
    return "\n".join(lines) + "\n"


def score_all(site: Path, url: str, pages: list[str], runs: int) -> str:
    """Score each page in each language; scores.md rewritten after each page."""
    results, loads, failing = {}, {}, {}
    for p in pages:
        for lang, root in LANGUAGES.items():
            if not (site / root / p / "index.html").exists():
                results[(lang, p)] = {"error": "no such page"}
                continue
            started, before = time.perf_counter(), os.getloadavg()[0]
            report = OUT / f"{lang}-{slug(p).replace('/', '_')}.json"
            result = results[(lang, p)] = median_run(url + root + p, runs, report)
            loads[(lang, p)] = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
            if "error" not in result:
                for audit in failing_audits(report):
                    failing.setdefault(audit, []).append(f"{lang} {slug(p)}")
            print(f"{lang} {slug(p)}: {_cell(result)} ({time.perf_counter() - started:.0f} s, "
                  f"load {loads[(lang, p)]})", file=sys.stderr, flush=True)
            (OUT / "scores.md").write_text(table(pages, results, loads, runs, failing), encoding="utf-8")
    text = table(pages, results, loads, runs, failing)
    if any("error" in r for r in results.values()):
        text += "\nSome pages could not be scored: see 'failed' above.\n"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="an existing build (else: build one for the server)")
    parser.add_argument("--port", type=int, help="the port the existing build was built for")
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is reported")
    parser.add_argument("--pages", nargs="+", metavar="PAGE",
                        help="only these pages, in both languages: home, pitfalls, "
                             "techniques/retain-grad (or retain-grad), notebooks/intermediate-gradients ...")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if chromium_path() is None:
        sys.exit("Debian's chromium is not installed: make system-packages")
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):  # a report left from an earlier run would pass for this one's
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="guide-lighthouse-") as folder:
        port = args.port or free_port()
        site = args.site
        if site is None:
            site = Path(folder) / "site"
            build(site, f"http://127.0.0.1:{port}/")
        pages = site_pages(site)
        if args.pages:
            pages = select(pages, args.pages)
        server = Server(site, port)
        try:
            text = score_all(site, server.url, pages, args.runs)
        finally:
            server.close()
    (OUT / "scores.md").write_text(text, encoding="utf-8")
    print(text)
    if "could not be scored" in text:
        sys.exit(1)


if __name__ == "__main__":
    main()
