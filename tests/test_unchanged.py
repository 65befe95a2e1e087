"""tests/unchanged.py: what the quick loop leaves out, and that nothing else is left out."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests import unchanged
from tools.snippets import ROOT

DOC = "snippets/shared/retain_grad.md"
SCRIPT = "snippets/ddp/ddp_intermediate_grads.py"


@pytest.mark.parametrize("nodeid, document", [
    (f"tests/test_examples.py::test_example[{DOC}:12]", DOC),
    ("tests/test_examples.py::test_example[docs/index.md:40]", "docs/index.md"),
    (f"tests/test_examples.py::test_example[{DOC} (differs on torch 2.4.1: snippets/shared/releases/retain_grad.md)]", DOC),
    (f"tests/test_examples.py::test_example[{DOC} (may warn outside before torch 2.14)]", DOC),
    (f"tests/test_scripts.py::test_script_prints_its_expected_output[{SCRIPT}]", SCRIPT),
    (f"tests/test_scripts.py::test_script_prints_its_expected_output[{SCRIPT} (differs on torch 2.4.1: x.md)]", SCRIPT),
    ("tests/test_examples.py::test_examples_were_collected", None),
    (f"tests/test_snippet_rules.py::test_no_blank_line_inside_a_class_or_function[{DOC}]", None),
    ("tests/test_benchmark.py::test_memory_is_measured_to_the_byte", "tests/test_benchmark.py"),
    ("tests/test_benchmark.py::test_every_figure_in_the_prose_comes_from_the_run[cost.md]", "tests/test_benchmark.py"),
])
def test_a_test_id_names_its_document(nodeid, document):
    assert unchanged.document_of(nodeid) == document


def test_a_key_changes_with_the_document_its_releases_and_the_shared_inputs(tmp_path, monkeypatch):
    folder = tmp_path / "snippets" / "shared"
    (folder / "releases").mkdir(parents=True)
    (folder / "retain_grad.md").write_text("a\n", encoding="utf-8")
    monkeypatch.setattr(unchanged, "ROOT", tmp_path)
    monkeypatch.setattr(unchanged.releases, "path", lambda stem: folder / "releases" / f"{stem}.md")
    first = unchanged.document_key("shared-1", DOC)
    assert unchanged.document_key("shared-1", DOC) == first
    assert unchanged.document_key("shared-2", DOC) != first
    (folder / "releases" / "retain_grad.md").write_text("on 2.4.1\n", encoding="utf-8")
    recorded = unchanged.document_key("shared-1", DOC)
    assert recorded != first
    (folder / "retain_grad.md").write_text("b\n", encoding="utf-8")
    assert unchanged.document_key("shared-1", DOC) not in (first, recorded)


def test_the_shared_key_covers_the_tools_the_tests_and_the_installed_packages():
    import importlib.metadata

    key = unchanged.shared_key()
    assert key == unchanged.shared_key()
    hashed = []
    real = unchanged._hash_files
    unchanged._hash_files = lambda digest, paths: hashed.extend(paths) or real(digest, paths)
    try:
        unchanged.shared_key()
    finally:
        unchanged._hash_files = real
    names = {p.relative_to(ROOT).as_posix() for p in hashed}
    assert {"tests/conftest.py", "tools/examples/evaluate.py", "snippets/versions.toml", "requirements.txt",
            "pyproject.toml"} <= names
    assert DOC not in names and SCRIPT not in names  # each document's own key holds it
    assert any(d.metadata["Name"] == "torch" for d in importlib.metadata.distributions())
    # what a run reaches by import or by name is in; the site's hooks and the browser job are not
    assert {"tools/examples/distributed_runner.py", "tools/reader/runtime_fresh.py", "tools/snippets/gates.py",
            "tests/test_scripts.py"} <= names
    assert not {"tools/site/search_rank.py", "tests/browser.py", "tests/test_browser.py"} & names


def test_a_module_an_example_run_imports_is_a_shared_input(tmp_path, monkeypatch):
    """The closure follows imports inside functions too, and files started by name."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("import os\ndef later():\n    import tools.site_only\n")
    (tmp_path / "tests" / "test_examples.py").write_text("def run():\n    from tools import evaluate\n")
    (tmp_path / "tests" / "test_scripts.py").write_text("RUNNER = 'runner.py'\n")
    (tmp_path / "tests" / "unchanged.py").write_text("")
    for name in ("evaluate", "runner", "site_only", "unrelated"):
        (tmp_path / "tools" / f"{name}.py").write_text("")
    monkeypatch.setattr(unchanged, "ROOT", tmp_path)
    reached = {p.relative_to(tmp_path).as_posix() for p in unchanged._what_runs_the_examples()}
    assert {"tools/evaluate.py", "tools/runner.py"} <= reached
    assert not {"tools/site_only.py", "tools/unrelated.py"} & reached  # conftest's functions: not followed


class _Hook:
    def __init__(self):
        self.deselected = []

    def pytest_deselected(self, items):
        self.deselected += items


def _plugin(tmp_path, keyword=""):
    config = SimpleNamespace(hook=_Hook(), args=[], option=SimpleNamespace(keyword=keyword))
    return unchanged.Unchanged(config, shared="shared", record=tmp_path / "passed.json")


def _items(*nodeids):
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def _report(nodeid, outcome, when="call"):
    return SimpleNamespace(nodeid=nodeid, when=when, failed=outcome == "failed", skipped=outcome == "skipped")


def test_only_a_document_whose_every_test_passed_is_left_out_next_time(tmp_path):
    passing = [f"tests/test_examples.py::test_example[{DOC}:{line}]" for line in (3, 9)]
    failing = ["tests/test_examples.py::test_example[docs/index.md:40]"]
    other = ["tests/test_layout.py::test_something"]
    first = _plugin(tmp_path)
    assert first.deselect(_items(*passing, *failing, *other)) == _items(*passing, *failing, *other)
    for nodeid in passing:
        first.logreport(_report(nodeid, "passed", "setup"))
        first.logreport(_report(nodeid, "passed"))
    first.logreport(_report(failing[0], "failed"))
    first.save()
    assert list(json.loads((tmp_path / "passed.json").read_text())) == [DOC]

    second = _plugin(tmp_path)
    kept = second.deselect(_items(*passing, *failing, *other))
    assert [i.nodeid for i in kept] == failing + other
    assert [i.nodeid for i in second.config.hook.deselected] == passing
    assert second.left_out == {DOC: 2}


BENCHMARK = ["tests/test_benchmark.py::test_memory_is_measured_to_the_byte",
             "tests/test_benchmark.py::test_relations_hold_on_small_models"]


def test_a_test_file_that_passed_whole_is_left_out_not_after_a_partial_run(tmp_path):
    for keyword, recorded in (("memory", False), ("", True)):
        plugin = _plugin(tmp_path, keyword)
        assert plugin.deselect(_items(*BENCHMARK)) == _items(*BENCHMARK)
        for nodeid in BENCHMARK:
            plugin.logreport(_report(nodeid, "passed"))
        plugin.save()
        assert ("tests/test_benchmark.py" in json.loads((tmp_path / "passed.json").read_text())) is recorded
    assert _plugin(tmp_path).deselect(_items(*BENCHMARK)) == []


def test_a_test_files_key_changes_with_what_it_reads(tmp_path, monkeypatch):
    (tmp_path / "tools" / "measure").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_benchmark.py").write_text("a\n", encoding="utf-8")
    monkeypatch.setattr(unchanged, "ROOT", tmp_path)
    first = unchanged.document_key("shared", "tests/test_benchmark.py")
    (tmp_path / "tools" / "measure" / "report.py").write_text("b\n", encoding="utf-8")
    second = unchanged.document_key("shared", "tests/test_benchmark.py")
    assert second != first
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cost.zh.md").write_text("c\n", encoding="utf-8")
    assert unchanged.document_key("shared", "tests/test_benchmark.py") not in (first, second)
    assert unchanged.document_key("shared-2", "tests/test_benchmark.py") != unchanged.document_key("shared", "tests/test_benchmark.py")


def test_a_document_that_did_not_run_to_the_end_or_was_skipped_is_not_recorded(tmp_path):
    ids = [f"tests/test_examples.py::test_example[{DOC}:{line}]" for line in (3, 9)]
    plugin = _plugin(tmp_path)
    plugin.deselect(_items(*ids))
    plugin.logreport(_report(ids[0], "passed"))  # the second never ran (-x, an interrupt)
    plugin.save()
    assert json.loads((tmp_path / "passed.json").read_text()) == {}
    plugin.logreport(_report(ids[1], "skipped", "setup"))
    plugin.save()
    assert json.loads((tmp_path / "passed.json").read_text()) == {}


def test_a_changed_document_runs_again_and_a_failure_forgets_it(tmp_path):
    ids = [f"tests/test_scripts.py::test_script_prints_its_expected_output[{SCRIPT}]"]
    plugin = _plugin(tmp_path)
    plugin.deselect(_items(*ids))
    plugin.logreport(_report(ids[0], "passed"))
    plugin.save()
    (tmp_path / "passed.json").write_text(json.dumps({SCRIPT: "the key of an older text"}))
    again = _plugin(tmp_path)
    assert [i.nodeid for i in again.deselect(_items(*ids))] == ids
    again.logreport(_report(ids[0], "failed"))
    again.save()
    assert json.loads((tmp_path / "passed.json").read_text()) == {}


@pytest.mark.parametrize("environment, args, on", [
    ({}, [], True),
    ({"CI": "true"}, [], False),
    ({"GUIDE_RUN_ALL": "1"}, [], False),
    ({"GUIDE_EXAMPLES_ONLY": DOC}, [], False),
    ({}, [f"tests/test_examples.py::test_example[{DOC}:3]"], False),
    ({}, ["tests/test_examples.py"], True),
])
def test_it_is_off_in_ci_under_make_test_and_for_named_tests(monkeypatch, environment, args, on):
    for name in ("CI", "GUIDE_RUN_ALL", "GUIDE_EXAMPLES_ONLY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert unchanged.enabled(SimpleNamespace(args=args)) is on


def test_make_test_runs_everything():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "GUIDE_RUN_ALL=1 $(BIN)/python -m pytest" in recipe


def test_the_matrix_runs_everything():
    """The matrix's pytest runs every example it selects on its release: a pass that passed
    earlier in the same folder (a recording pass, say) must not leave the next one's out (found:
    a full torch 2.8.0 pass left out the 35 documents its recording pass had just run)."""
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    call = noxfile.split('"python", "-m", "pytest", *(DOCTESTS', 1)[1].split("success_codes", 1)[0]
    assert '"GUIDE_RUN_ALL": "1"' in call


def test_the_shared_key_ignores_the_sessions_own_cache_folders_not_the_settings(monkeypatch):
    """Each session makes new empty cache folders (tools/examples/offline.py): the same tree gives
    the same key in the next session; a setting that reaches torch gives another."""
    key = unchanged.shared_key()
    for name in ("GUIDE_EMPTY_CACHE", "HF_HOME", "TORCH_HOME"):
        monkeypatch.setenv(name, "/elsewhere")
    assert unchanged.shared_key() == key
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert unchanged.shared_key() != key
