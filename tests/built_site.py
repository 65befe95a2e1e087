"""The session's two builds of the site, started once and shared by every test that reads them.

The strict build of both languages serves tests/test_site_pages.py, tests/test_site_page_status.py,
test_browser.py, test_checker_carries.py, test_llms.py and test_page_load.py; a small project with
the site's configuration, broken three ways (MINI_PAGES, MUTATIONS), serves tests/test_site_strict_build.py. conftest.py starts both right after
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


# The mutated build breaks a small project of its own: the site's mkdocs.yml (its plugins, hooks,
# validation and i18n settings) over four short pages in both languages (MINI_PAGES), with the nav
# set to them. What catches a breakage is the configuration, not the pages' text; the full site's
# own strict build passes beside it. (Built over the whole site it cost 12 CPU-s, the quick loop's
# largest share after its own tests.)
MINI_PAGES = {
    "index.md": "# Home\n\nStart with [retain_grad](techniques/retain-grad.md#keep-it) or the [glossary](glossary.md).\n",
    "index.zh.md": "# 首页\n\n先读 [retain_grad](techniques/retain-grad.md#keep-it) 或[术语表](glossary.md)。\n",
    "glossary.md": "# Glossary\n\nA hook: see [register_hook](techniques/register-hook.md).\n",
    "glossary.zh.md": "# 术语表\n\n钩子：见 [register_hook](techniques/register-hook.md)。\n",
    "techniques/retain-grad.md": "# retain_grad\n\n## Keep it { #keep-it }\n\nBack to the [home page](../index.md).\n",
    "techniques/retain-grad.zh.md": "# retain_grad\n\n## 保留它 { #keep-it }\n\n回到[首页](../index.md)。\n",
    "techniques/register-hook.md": "# register_hook\n\nSee [retain_grad](retain-grad.md#keep-it).\n",
    "techniques/register-hook.zh.md": "# register_hook\n\n见 [retain_grad](retain-grad.md#keep-it)。\n",
}
_MINI_NAV = ("nav:\n  - Home: index.md\n  - Techniques:\n      - techniques/retain-grad.md\n"
             "      - techniques/register-hook.md\n  - Reference:\n      - glossary.md\n")


def _mini_project(project: Path) -> None:
    """The small project the mutations break (see MINI_PAGES): the site's configuration and tools."""
    for folder in ("snippets", "tools"):
        shutil.copytree(ROOT / folder, project / folder)
    for folder in ("overrides", "assets"):
        shutil.copytree(ROOT / "docs" / folder, project / "docs" / folder)
    for page, text in MINI_PAGES.items():
        (project / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (project / "docs" / page).write_text(text, encoding="utf-8")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = _NOTEBOOK_PLUGIN.sub("", config, count=1)  # the pages are Markdown only
    config = re.sub(r"^nav:\n(?:  .*\n|\n)*", _MINI_NAV, config, count=1, flags=re.MULTILINE)
    (project / "mkdocs.yml").write_text(config, encoding="utf-8")


def start_builds(workdir: Path) -> None:
    """Start every build of the session in the background (conftest.py calls this right after
    collection), so that they run while the snippet examples run: both cores stay busy."""
    if _STARTED:
        return
    project = workdir / "broken" / "guide"
    _mini_project(project)
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
