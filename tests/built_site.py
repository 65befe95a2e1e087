"""The session's two builds of the site, started once and shared by every test that reads them.

The strict build of both languages serves tests/test_site_pages.py, tests/test_site_page_status.py,
test_browser.py, test_checker_carries.py, test_llms.py and test_page_load.py; a copy of the sources broken
three ways (MUTATIONS) serves tests/test_site_strict_build.py. conftest.py starts both right after
collection when test_site_*.py or test_browser.py is selected; otherwise the first test that needs
them does. A module that reads a build imports the fixtures `builds` and `site` from here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.pages import pages
from tools.dev.serve import free_port
from tools.snippets import ROOT

PAGES = pages()
BUILD_TIMES: dict[str, float] = {}   # reported by conftest.py, never asserted


def mkdocs_build(project: Path, site: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    environment.pop("GUIDE_ALLOW_FALLBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project, env=environment, capture_output=True, text=True, timeout=300,
    )


def _timed(name: str, project: Path, site: Path, **env: str) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = mkdocs_build(project, site, **env)
    BUILD_TIMES[name] = time.perf_counter() - started
    return result


_STARTED: dict = {}


# The site is built for the address the browser tests serve it at: absolute URLs (canonical,
# hreflang, the sitemaps Material fetches) then point at the local server.
SITE_URL = f"http://127.0.0.1:{free_port()}/"
# GitHub Actions names the repository; elsewhere a stand-in, for the notebooks' Colab links.
REPOSITORY = os.environ.get("GITHUB_REPOSITORY") or "example/intermediate-gradients"


_NOTEBOOK_PLUGIN = re.compile(r"^  - mkdocs-jupyter:\n(?:      .*\n)+", re.MULTILINE)
# What the mutated build leaves out besides: the search index (jieba's Chinese segmentation) and
# the hooks that only write more files from pages already checked (llms twins, downloads, page
# speed, the search worker's ranking): half the build's CPU time. Links, anchors and translations
# are checked by MkDocs, the i18n plugin and plugin_fixes, which stay.
_OUTPUT_ONLY = re.compile(r"^  - search:\n(?:      .*\n)+|^  - tools/site/(?:llms|downloads|page_speed|search_rank)\.py.*\n",
                          re.MULTILINE)


def start_builds(workdir: Path) -> None:
    """Start every build of the session in the background (conftest.py calls this right after
    collection), so that they run while the snippet examples run: both cores stay busy."""
    if _STARTED:
        return
    project = workdir / "broken" / "guide"
    for folder in ("docs", "snippets", "tools"):
        shutil.copytree(ROOT / folder, project / folder)
    # The breakages are in Markdown pages: the notebook plugin (2.5 of its 7.5 s) is left out.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = _OUTPUT_ONLY.sub("", _NOTEBOOK_PLUGIN.sub("", config, count=1))
    (project / "mkdocs.yml").write_text(config, encoding="utf-8")
    for _, mutate in MUTATIONS.values():
        mutate(project)
    jobs = {
        "site": ("strict build, both languages", ROOT, workdir / "site",
                 {"SITE_URL": SITE_URL, "GITHUB_REPOSITORY": REPOSITORY}),
        "broken": ("mutated build (three breakages)", project, project.parent / "site", {}),
    }
    pool = ThreadPoolExecutor(max_workers=len(jobs))
    for name, (label, source, site, env) in jobs.items():
        _STARTED[name] = (site, pool.submit(_timed, label, source, site, **env))
    pool.shutdown(wait=False)


@pytest.fixture(scope="session")
def builds(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    start_builds(tmp_path_factory.mktemp("builds"))  # no-op when conftest.py already started them
    return {name: (site, future.result()) for name, (site, future) in _STARTED.items()}


@pytest.fixture(scope="session")
def site(builds) -> Path:
    target, result = builds["site"]
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return target


# Every page of both languages, as a test parameter.
each_page = pytest.mark.parametrize("page", PAGES, ids=[p.rel for p in PAGES])


# --- The breakages of the mutated build (tests/test_site_strict_build.py) ----------------------
# Warnings are all reported before strict mode aborts, so those breakages share one build.

def _append(project: Path, page: str, text: str) -> None:
    path = project / "docs" / page
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


# id: (what the log must name, breakage)
MUTATIONS = {
    "missing-chinese-page": (
        "register-hook.md",
        lambda project: (project / "docs/techniques/register-hook.zh.md").unlink(),
    ),
    "broken-anchor": (
        "index.zh.md",
        lambda project: _append(project, "index.zh.md", "\n[失效](techniques/retain-grad.md#no-such-section)\n"),
    ),
    "broken-link": (
        "glossary.md",
        lambda project: _append(project, "glossary.md", "\n[gone](techniques/no-such-page.md)\n"),
    ),
}
