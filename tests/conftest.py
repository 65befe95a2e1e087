"""Starts the slow background work early (site builds, script snippets, the browser job, the
examples of the documents that import heavy libraries) and reports its wall times. Timings are
reported, never asserted."""

import gc
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# One intra-op thread per process, here and in every process the suite starts (the second examples
# process, scripts, builds): they run at once on two cores, where two OpenMP threads per process
# spin against each other. DeepLabV3's example, measured beside another busy process: 0.56 s of
# CPU (3.4 s wall) with one thread, 4.2 s (40 s wall) with two. `make outputs` and the matrix keep
# torch's default, so the outputs hold either way. OMP_NUM_THREADS set beforehand wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from tools.examples import offline  # noqa: E402
from tools.snippets import ROOT  # noqa: E402

offline.install()  # an example that reaches for a model hub or the network fails, never skips

_WORKDIR: list[Path] = []
_UNCHANGED: list = []  # tests/unchanged.py's plugin, where it is on


def pytest_configure(config):
    from tests import unchanged

    if unchanged.enabled(config) and not config.option.collectonly:
        _UNCHANGED.append(unchanged.Unchanged(config))
    if _whole_suite(config):
        _start_before_collection()


def _whole_suite(config) -> bool:
    """`make test`: GUIDE_RUN_ALL=1 and every test under testpaths, none left out by an option."""
    option = config.option
    return (os.environ.get("GUIDE_RUN_ALL") == "1" and config.args_source == config.ArgsSource.TESTPATHS
            and not (option.keyword or option.markexpr or option.collectonly or option.deselect
                     or getattr(option, "lf", False) or option.ignore or option.ignore_glob))


def _start_before_collection() -> None:
    """In a whole run, the work that needs nothing collected starts now: the second examples
    process (its documents are read from their files) and the site builds. For its first seconds
    a run is this process collecting alone, on one core of two (vmstat: half idle for 8 s)."""
    from tests import second_process
    from tests.built_site import start_builds

    second_process.start(sorted(second_process.SECOND))
    _WORKDIR.append(Path(tempfile.mkdtemp(prefix="guide-builds-")))
    start_builds(_WORKDIR[0])


def pytest_collection_modifyitems(items):
    """Tests that wait for background work come after those that do not, in the order that work
    ends: this process runs its own tests while the builds, scripts, second examples process and
    browser job run (waiting at the first test of test_browser.py, alphabetically second, left it
    idle for four of a fresh clone's six minutes). Within each group the order is unchanged."""
    examples = sys.modules.get("tests.test_examples")
    second = examples.SECOND if examples is not None else set()
    if _UNCHANGED:  # first: what is left out starts no background work
        items[:] = _UNCHANGED[0].deselect(items)

    def waits_for(item) -> int:
        if item.nodeid.startswith("tests/test_browser.py") or "browsed" in item.fixturenames:
            return 4  # the browser job: last to end
        if second and item.nodeid.startswith("tests/test_examples.py") and examples._document_of(item.nodeid) in second:
            return 3  # the second examples process
        if {"site", "builds", "reader", "probe"} & set(item.fixturenames):
            return 2  # the site builds, the checker's runs
        if item.nodeid.startswith("tests/test_scripts.py"):
            return 1  # the script snippets
        return 0

    items.sort(key=waits_for)  # stable


def pytest_collection_finish(session):
    """Start the slow subprocess work now (site builds, script snippets) if any of it is selected:
    it then runs while the examples run."""
    if session.config.option.collectonly:
        return
    # What collection built (every parsed document and test item) lives to the end: the garbage
    # collector stops walking it, and collects young objects less often. The quick loop's own
    # process spent 3.5 s in the collector, 2.1 s with this (gc.callbacks, 2026-11-30). An
    # example whose output needs garbage collected calls gc.collect() itself: in a reader's
    # process the automatic collections come at other moments anyway.
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    if any("reader" in item.fixturenames or "probe" in item.fixturenames for item in session.items):
        from tests.test_checker_run import start_runs

        start_runs()
    examples = [item.nodeid for item in session.items if item.nodeid.startswith("tests/test_examples.py")]
    if examples:  # the documents that import heavy libraries, in a second process
        from tests.test_examples import start_second_process

        start_second_process(examples)
    scripts = [item.nodeid for item in session.items if item.nodeid.startswith("tests/test_scripts.py")]
    if scripts:
        from tests.test_scripts import start_scripts

        start_scripts(scripts)
    if any(item.nodeid.startswith("tests/test_site_") for item in session.items):  # test_site_*.py
        from tests.built_site import _STARTED, start_builds

        if not _STARTED:
            _WORKDIR.append(Path(tempfile.mkdtemp(prefix="guide-builds-")))
            start_builds(_WORKDIR[0])
    if any(item.nodeid.startswith(("tests/test_browser.py", "tests/test_browser_search.py")) for item in session.items):
        from tests.built_site import _STARTED, start_builds
        from tests.test_browser import start_browser

        if not _STARTED:
            _WORKDIR.append(Path(tempfile.mkdtemp(prefix="guide-builds-")))
            start_builds(_WORKDIR[0])
        start_browser(*_STARTED["site"])
        from tests.test_scripts import SCRIPTS, start_scripts  # a copy equal to a script reads its run

        start_scripts([path.relative_to(ROOT).as_posix() for path in SCRIPTS])  # no-op if started above


# In the second examples process (tests/test_examples.py starts it): the file where each example's
# outcome goes as its test ends, for the first process to report while this one runs.
_OUTCOMES = os.environ.get("GUIDE_EXAMPLES_OUTCOMES")
_ENDED: dict[str, tuple[str, str]] = {}  # test id -> (outcome, message) so far, until its teardown


def _write_outcome(report) -> None:
    """One JSON line [test name, 'passed' | 'failed' | 'xfailed', message] once a test has ended
    (its teardown): a failure in any phase fails it, a skip fails it too (an example is never
    skipped), as in the JUnit file this replaces."""
    got = _ENDED.get(report.nodeid)
    if report.failed:
        before = got[1] + "\n" if got and got[0] == "failed" else ""
        _ENDED[report.nodeid] = ("failed", before + report.longreprtext)
    elif report.skipped and (got is None or got[0] != "failed"):
        _ENDED[report.nodeid] = (("xfailed", report.wasxfail) if hasattr(report, "wasxfail")
                                 else ("failed", f"skipped: {report.longrepr[-1]}"))
    elif report.when == "call" and got is None:
        _ENDED[report.nodeid] = ("passed", "")
    if report.when == "teardown":
        line = json.dumps([report.nodeid.split("::")[-1], *_ENDED.pop(report.nodeid, ("passed", ""))])
        with open(_OUTCOMES, "a", encoding="utf-8") as file:  # one write per line
            file.write(line + "\n")


def pytest_runtest_logreport(report):
    """Each example test's outcome, by document, for tests/test_browser.py: a copy equal to a
    snippet's code reads its examples' outcomes instead of running them again."""
    if _UNCHANGED:
        _UNCHANGED[0].logreport(report)
    if _OUTCOMES and report.nodeid.startswith("tests/test_examples.py::test_example["):
        _write_outcome(report)
    if report.nodeid.startswith("tests/test_examples.py::test_example["):
        examples = sys.modules["tests.test_examples"]
        if report.failed or report.skipped or report.when == "call":
            examples.OUTCOMES.setdefault(examples._document_of(report.nodeid), {})[report.nodeid] = (
                "failed" if report.failed else "skipped" if report.skipped else "passed")


def pytest_sessionfinish(session):
    # frozen objects are left out of the interpreter's last collection at exit too, and libraries
    # that count their objects then (triton's nanobind bindings) report them as leaked
    gc.unfreeze()
    if _UNCHANGED:
        _UNCHANGED[0].save()
    for workdir in _WORKDIR:
        shutil.rmtree(workdir, ignore_errors=True)
    checker_runs = sys.modules.get("tests.test_checker_run")
    if checker_runs is not None:
        checker_runs.stop_runs()
    if "tests.second_process" in sys.modules:
        sys.modules["tests.second_process"].finish()


def pytest_terminal_summary(terminalreporter):
    from tests.built_site import BUILD_TIMES

    if _UNCHANGED:
        _UNCHANGED[0].summary(terminalreporter)

    if BUILD_TIMES:
        terminalreporter.section("background jobs: wall times")
        for name, seconds in BUILD_TIMES.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
