"""Starts the slow background work early (site builds, script snippets, the browser job) and
reports its wall times. Timings are reported, never asserted."""

import shutil
import tempfile
from pathlib import Path

from tools import offline

offline.install()  # an example that reaches for a model hub or the network fails, never skips

_WORKDIR: list[Path] = []


def pytest_collection_finish(session):
    """Start the slow subprocess work now (site builds, script snippets) if any of it is selected:
    it then runs while the examples run."""
    if any(item.nodeid.startswith("tests/test_scripts.py") for item in session.items):
        from tests.test_scripts import start_scripts

        start_scripts()
    if any(item.nodeid.startswith("tests/test_site.py") for item in session.items):
        from tests.test_site import start_builds

        _WORKDIR.append(Path(tempfile.mkdtemp(prefix="guide-builds-")))
        start_builds(_WORKDIR[0])
    if any(item.nodeid.startswith("tests/test_browser.py") for item in session.items):
        from tests.test_browser import start_browser
        from tests.test_site import _STARTED, start_builds

        if not _STARTED:
            _WORKDIR.append(Path(tempfile.mkdtemp(prefix="guide-builds-")))
            start_builds(_WORKDIR[0])
        start_browser(*_STARTED["site"])


def pytest_sessionfinish(session):
    for workdir in _WORKDIR:
        shutil.rmtree(workdir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    from tests.test_site import BUILD_TIMES

    if BUILD_TIMES:
        terminalreporter.section("background jobs: wall times")
        for name, seconds in BUILD_TIMES.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
