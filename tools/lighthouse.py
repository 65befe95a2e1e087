"""Lighthouse scores of the built site: performance, accessibility, best practices, SEO.

    make lighthouse                                  # build, serve on 127.0.0.1, score, report
    python -m tools.lighthouse --runs 1              # one run per page instead of the median of 3
    python -m tools.lighthouse --site site --port 8000  # score a build made for that address

Lighthouse (npm, version pinned below, run with npx) drives Debian's Chromium with its default
mobile profile (emulated phone, simulated slow 4G and 4x CPU slowdown). The pages: the home page, a
technique page and the notebook page, in both languages. Scores go to stdout and to
build/lighthouse/scores.md, the full reports to build/lighthouse/*.json. Each score is the median
of --runs runs (3 by default; Lighthouse's performance score moves by several points from run to
run). Scores are reported, never asserted: they also vary with the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.serve import CHROMIUM_FLAGS, Server, chromium_path, free_port

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "lighthouse"
LIGHTHOUSE = "lighthouse@13.5.0"
PAGES = {
    "home": "",
    "technique": "techniques/retain-grad/",
    "notebook": "notebooks/intermediate-gradients/",
}
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def build(site: Path, url: str) -> None:
    env = {**os.environ, "SITE_URL": url, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
                   cwd=ROOT, env=env, check=True)


def score(url: str, report: Path) -> dict[str, int]:
    chrome = chromium_path()
    if chrome is None:
        sys.exit("Debian's chromium is not installed: make system-packages")
    flags = " ".join(["--headless=new", *CHROMIUM_FLAGS])
    subprocess.run(
        ["npx", "--yes", LIGHTHOUSE, url, "--quiet", "--output=json", f"--output-path={report}",
         f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={flags}"],
        env={**os.environ, "CHROME_PATH": chrome}, check=True,
    )
    result = json.loads(report.read_text(encoding="utf-8"))
    return {name: round(result["categories"][name]["score"] * 100) for name in CATEGORIES}


def failing_audits(report: Path) -> list[str]:
    """The audits that lost points, for the report: '<category>: <audit title>'."""
    result = json.loads(report.read_text(encoding="utf-8"))
    found = []
    for name in CATEGORIES:
        for ref in result["categories"][name]["auditRefs"]:
            audit = result["audits"][ref["id"]]
            if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
                found.append(f"{name}: {audit['title']} ({audit['score']:.2f})")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="an existing build (else: build one for the server)")
    parser.add_argument("--port", type=int, help="the port the existing build was built for")
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is reported")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="guide-lighthouse-") as folder:
        port = args.port or free_port()
        site = args.site
        if site is None:
            site = Path(folder) / "site"
            build(site, f"http://127.0.0.1:{port}/")
        server = Server(site, port)
        rows, notes = [], []
        try:
            for lang in ("en", "zh"):
                for name, path in PAGES.items():
                    page = ("zh/" if lang == "zh" else "") + path
                    report = OUT / f"{lang}-{name}.json"
                    runs = [score(server.url + page, report) for _ in range(args.runs)]
                    scores = {c: statistics.median(run[c] for run in runs) for c in CATEGORIES}
                    rows.append(f"| {lang} | {name} | /{page} | " + " | ".join(str(scores[c]) for c in CATEGORIES) + " |")
                    notes += [f"- {lang} {name}: {audit}" for audit in failing_audits(report)]
        finally:
            server.close()
    table = "\n".join([
        f"Median of {args.runs} run(s) per page, Lighthouse {LIGHTHOUSE.split('@')[1]}, mobile profile.",
        "",
        "| language | page | path | performance | accessibility | best practices | SEO |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])
    text = f"{table}\n\nAudits that lost points:\n\n" + ("\n".join(notes) or "- none") + "\n"
    (OUT / "scores.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
