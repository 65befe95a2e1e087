"""Starts the site builds early and reports their wall times. Timings are reported, never asserted."""

import shutil
import tempfile
from pathlib import Path

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


def pytest_sessionfinish(session):
    for workdir in _WORKDIR:
        shutil.rmtree(workdir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    from tests.test_site import BUILD_TIMES

    if BUILD_TIMES:
        terminalreporter.section("build wall times")
        for name, seconds in BUILD_TIMES.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
