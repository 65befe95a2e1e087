"""Reports build wall times at the end of the run. Timings are reported, never asserted."""


def pytest_terminal_summary(terminalreporter):
    from tests.test_site import BUILD_TIMES

    if BUILD_TIMES:
        terminalreporter.section("build wall times")
        for name, seconds in BUILD_TIMES.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
