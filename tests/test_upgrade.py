"""`make upgrade` (tools/examples/upgrade.py) and the newest-torch report (tools/examples/newest_torch.py): their parts."""

import textwrap

from tools.examples import newest_torch, upgrade

KNOWN = ["2.4.1", "2.5.1", "2.6.0", "2.9.1", "2.13.0", "2.14.1", "2.15.0"]


def test_a_new_output_that_holds_from_the_new_pin_on_is_gated_since_it():
    assert upgrade.gate_fields(["2.15.0"], KNOWN) == {"since": "2.15"}


def test_a_new_output_held_by_older_releases_too_names_the_holes():
    assert upgrade.gate_fields(["2.4.1", "2.5.1", "2.15.0"], KNOWN) == {"differs_on": ["2.6", "2.9", "2.13", "2.14"]}


def test_a_new_output_between_releases_gets_both_ends():
    assert upgrade.gate_fields(["2.9.1", "2.13.0"], KNOWN) == {"since": "2.9", "before": "2.14"}


def test_prose_that_quotes_a_removed_line_or_the_old_pin_is_listed(tmp_path, monkeypatch):
    (tmp_path / "page.md").write_text("Torch prints `RuntimeError: the old wording` here.\nNothing.\n")
    (tmp_path / "page.zh.md").write_text("在 torch 2.13.0 上。\n2.13.01 不算。\n")
    monkeypatch.setattr(upgrade, "DOCS", tmp_path)
    monkeypatch.setattr(upgrade, "ROOT", tmp_path)
    hits = upgrade.quoted_in_prose(["RuntimeError: the old wording"], "2.13.0")
    assert hits == ["page.md:1: Torch prints `RuntimeError: the old wording` here.", "page.zh.md:1: 在 torch 2.13.0 上。"]


def test_the_newest_report_names_each_differing_example_and_fails_while_untracked(tmp_path, monkeypatch):
    (tmp_path / "2.16.0.xml").write_text(textwrap.dedent("""\
        <testsuites><testsuite name="pytest" tests="2" time="12.5" timestamp="2026-12-01T00:00:00">
        <testcase classname="tests.test_examples" name="test_example[snippets/a/retain_grad.md:3]">
        <failure message="retain_grad printed tensor(2.) | not tensor(1.)">...</failure></testcase>
        <testcase classname="tests.test_examples" name="test_example[snippets/a/other.md:3]"/>
        </testsuite></testsuites>"""))
    (tmp_path / "2.16.0.checker-pins.txt").write_text(
        "Snippets: 1 passed, 1 differ, 0 differ as their pages say, 0 not run\nexit status 1\n")
    monkeypatch.setattr(newest_torch, "ROOT", tmp_path.parent)
    monkeypatch.delenv("NEWEST_TRACKED", raising=False)
    text, status = newest_torch.report(tmp_path)
    assert status == 1
    assert "| `retain_grad` | 3: retain_grad printed tensor(2.) \\| not tensor(1.) |" in text
    assert "with the pinned libraries: exit status 1, 1 passed, 1 differ" in text
    assert "with torch and numpy only: did not run" in text


def test_a_tracked_newest_release_passes(monkeypatch):
    monkeypatch.setenv("NEWEST_TRACKED", "2.14.1")
    assert newest_torch.is_tracked("2.14.1") and not newest_torch.is_tracked("2.15.0")


def test_a_recorded_difference_widens_the_gate_and_keeps_the_older_releases(tmp_path, monkeypatch):
    from tools.snippets import gates

    toml = tmp_path / "versions.toml"
    toml.write_text('[one]\nsince = "2.6"\ndiffers_on = ["2.0"]\nwhy = "kept"\n')
    monkeypatch.setattr(gates, "VERSION_GATES", toml)
    monkeypatch.setattr(upgrade, "VERSION_GATES", toml)
    upgrade.widen_gate("one", "2.7.1")
    upgrade.widen_gate("two", "2.10.0")
    found = gates.version_gates()
    assert (found["one"].since, found["one"].differs_on, found["one"].why) == ("2.6", ("2.0", "2.7"), "kept")
    assert found["two"].differs_on == ("2.10",) and "say why" in found["two"].why


def test_a_script_killed_at_its_time_limit_is_not_recorded(tmp_path, monkeypatch, capsys):
    """A matrix pass on a loaded machine once recorded '[failed] ... did not finish in 90 s' as
    what torch 2.7.1 prints: a time-out says nothing about the release."""
    import subprocess

    from tools.examples import refresh_outputs
    from tools.snippets import releases

    script = tmp_path / "slow.py"
    script.write_text("print('hi')\n")
    script.with_suffix(".out").write_text("hi\n")
    killed = subprocess.CompletedProcess([], -9, "hi\n", "slow.py did not finish in 90 s: killed")
    monkeypatch.setattr(refresh_outputs, "run_script", lambda path: killed)
    monkeypatch.setattr(refresh_outputs, "is_distributed", lambda path: False)
    recorded = []
    monkeypatch.setattr(releases, "record", lambda *args: recorded.append(args))
    monkeypatch.setattr(refresh_outputs, "rel", lambda path: path.name)
    assert refresh_outputs._record_if_different(None, script, "2.7.1") == 0
    assert recorded == [] and "not recorded: slow.py did not finish" in capsys.readouterr().out


def test_the_recorder_starts_each_snippet_as_a_new_process_would(monkeypatch):
    """transformers' `warning_once` remembers what it logged: without a reset, a matrix pass printed
    `logged: []` where the page (and a reader's new process) shows the warning."""
    from tools.examples import fresh, refresh_outputs
    from tools.snippets.model import find, Snippet

    calls = []
    monkeypatch.setattr(fresh, "as_in_a_new_process", lambda: calls.append(1))
    snippet = Snippet.load(find("retain_grad"))
    refresh_outputs._run_examples(snippet, on_release=False)
    assert calls == [1]


def test_a_difference_on_a_gate_with_a_warning_is_named_and_the_warning_range_kept(tmp_path, monkeypatch):
    """A gate whose before= marks where the output holds with a warning: widening it to 2.4 once
    wrote since = "2.12", which made 2.4 to 2.11 'hold with the warning' too."""
    from tools.snippets import gates

    toml = tmp_path / "versions.toml"
    toml.write_text('[one]\nbefore = "2.14"\ndiffers_on = ["2.5", "2.9"]\nwarns = "`torch.jit.script` is deprecated"\nwhy = "kept"\n')
    monkeypatch.setattr(gates, "VERSION_GATES", toml)
    monkeypatch.setattr(upgrade, "VERSION_GATES", toml)
    upgrade.widen_gate("one", "2.4.1")
    one = gates.version_gates()["one"]
    assert (one.since, one.before, one.differs_on, one.why) == (None, "2.14", ("2.4", "2.5", "2.9"), "kept")
    assert one.warns_on((2, 15)) and not one.warns_on((2, 4)) and not one.warns_on((2, 12))


def test_a_script_runs_in_the_environment_the_process_started_with(monkeypatch):
    """ultralytics sets TORCH_CPP_LOG_LEVEL=ERROR in os.environ when imported: the scripts recorded
    after a YOLO example lost the C++ warnings a reader's own run prints."""
    from tools.examples import scripts

    monkeypatch.setitem(__import__("os").environ, "TORCH_CPP_LOG_LEVEL", "ERROR")
    assert scripts._script_env("cache").get("TORCH_CPP_LOG_LEVEL") == scripts._START_ENV.get("TORCH_CPP_LOG_LEVEL")
