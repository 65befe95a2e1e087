"""How the reader's checker (tools/reader/checker.py writes check_guide.py) judges an example.

It compares outputs as the tests do, reads a gate's releases as they do, and writes a script's
output and an exception as the guide records them on other releases. On a release a gate
excludes (a gate made up for the test), only exactly the output recorded for that release
(releases/, here made up too) is "differs as the page says"; where the page says the
output varies, a difference is reported, not failed; an example whose library (numpy, or a module
torch needs there) is missing is not run. The runs are in this process, mostly on a copy with one
expected line changed.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

import pytest

from tests.checker_helpers import BROKEN_LINE, BROKEN_PAGE, CHANGED_LINE, line_of, main_here
from tests.checker_helpers import changed, generated, module  # noqa: F401  (fixtures)
from tools.snippets import releases
from tools.snippets import FENCE, SNIPPETS, find


@pytest.mark.parametrize("want, got", [
    ("a  \nb\n", "a\nb   \n"),                # trailing whitespace, either side
    ("x at 0x...\n", "x at 0x7f3a\n"),         # an address
    ("path: ...\n", "path:\n"),                # the space before a line-ending ... (Sybil's rule)
    ("tensor([1.])\n", "tensor([1.0])\n"),     # no NUMBER: a different number is a difference
    ("a\nb\n", "a\n\nb\n"),                    # no NORMALIZE_WHITESPACE
    ("a\n<BLANKLINE>\nb\n", "a\n\nb\n"),
])
def test_the_checker_compares_as_the_tests_do(module, want, got):
    import doctest

    from sybil.evaluators.doctest import OutputChecker

    from tools.snippets import FLAGS

    assert module.FLAGS == FLAGS
    ours, theirs = module.CHECKER.check_output(want, got, FLAGS), OutputChecker().check_output(want, got, FLAGS)
    assert ours == theirs, f"check_guide.py says {ours}, the tests say {theirs}, for {want!r} vs {got!r}"
    example = doctest.Example("print()\n", want)
    assert module.CHECKER.output_difference(example, got, FLAGS) == OutputChecker().output_difference(example, got, FLAGS)


def test_the_checker_runs_where_the_tests_say_the_output_differs(module):
    """A gate's releases, as the tests read them (tools.snippets.Gate.excludes)."""
    from tools.snippets import version_gates

    for name, gate in version_gates().items():
        for release in [(2, minor) for minor in range(0, 20)]:
            assert module.gate_excludes(module.GATES[name], release) == gate.excludes(release), (
                f"check_guide.py: gate {name} on {release}")


def test_the_checker_records_a_script_as_the_guide_does(module):
    stderr = "Traceback (most recent call last):\n  File \"x.py\", line 1\nAttributeError: no record_event\n"
    for code, err in [(0, ""), (1, stderr), (1, ""), (-9, "killed\n")]:
        assert module.script_body("a\n", code, err) == releases.script_body("a\n", code, err)


@pytest.mark.parametrize("error", [ImportError("\n\nrequires PyTorch >= 2.6\nmore"), KeyError("key"),
                                   ValueError(), RuntimeError("a: b\nc")], ids=repr)
def test_the_checker_writes_an_exception_as_the_guide_records_it(module, error):
    """A recorded release output ends with an exception's first line (tools.snippets.exception_line);
    the checker must write a raised one the same way, or a recorded crash never matches."""
    from tools.examples.evaluate import exception_line

    assert module.exception_line(error) == exception_line(error)


# A gate made up for the test: the current torch is a release it excludes, so non_leaf_grad_warning
# (its page's copy has CHANGED_LINE) is compared with what the guide "recorded" on this release.
VERSION = __import__("torch").__version__.split("+")[0]


def _gate(**recorded) -> dict:
    gate = {"since": "99.0", "label": "torch 99.0+", "why": "a made-up reason"}
    return {**gate, "recorded": [recorded]} if recorded else gate


def _body(name: str, text: str | None = None) -> str:
    return FENCE.search(text or find(name).read_text(encoding="utf-8"))["body"]


def test_on_a_gated_release_its_exact_recorded_output_differs_as_the_page_says(changed, capsys):
    changed.GATES["non_leaf_grad_warning"] = _gate(releases=["2.4.1", VERSION], kind="pycon",
                                                  body=_body("non_leaf_grad_warning"))
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 0, f"check_guide.py returned {code} for the output recorded on this release:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +passed .*non_leaf_grad_warning: differs as the page says "
                    r"\(torch 99\.0\+: a made-up reason\)", line_of(stdout, BROKEN_PAGE)), stdout
    assert "0 differ, 1 differ as their pages say" in stdout, stdout


def test_on_a_gated_release_a_changed_recorded_line_fails(changed, capsys):
    changed_text = changed.SNIPPETS["non_leaf_grad_warning"]["text"]
    changed.GATES["non_leaf_grad_warning"] = _gate(releases=[VERSION], kind="pycon",
                                                  body=_body("non_leaf_grad_warning", changed_text))
    changed.SNIPPETS["non_leaf_grad_warning"]["text"] = find("non_leaf_grad_warning").read_text()
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} for output other than recorded:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +differs +1 of \d+ snippets? differ", line_of(stdout, BROKEN_PAGE)), stdout
    assert f"against the output the guide recorded on torch {VERSION}:" in stdout, stdout
    assert f"Expected:\n    {CHANGED_LINE}\nGot:\n    {BROKEN_LINE}" in stdout, stdout
    assert "the page's note: on torch " in stdout and "(torch 99.0+: a made-up reason)" in stdout, stdout


def test_on_a_gated_release_the_guide_never_ran_only_the_pages_output_passes(module, changed, capsys, monkeypatch):
    """No recording of this release: the page's own output passes; anything else differs."""
    gate = _gate(releases=["2.4.1"], kind="pycon", body=_body("non_leaf_grad_warning"))
    monkeypatch.setitem(module.GATES, "non_leaf_grad_warning", gate)
    code, stdout = main_here(module, ["--page", BROKEN_PAGE], capsys)
    assert code == 0 and re.match(rf"{BROKEN_PAGE} +passed +\d+ snippets?", line_of(stdout, BROKEN_PAGE)), stdout
    changed.GATES["non_leaf_grad_warning"] = gate
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} on a release the guide has no output of:\n{stdout}"
    release = ".".join(VERSION.split(".")[:2])
    assert (f"The guide has no recorded output of this example for torch {release}; the page's note says "
            "it differs (torch 99.0+: a made-up reason).") in stdout, stdout


CRASH = """```pycon title="crash"
>>> numbers = [1, 0]
>>> print(1 / numbers[1])
inf
>>> print("after")
after
```
"""


def _doctest_here(module, text: str, gate: dict):
    """run_doctest on a snippet made up for the test, in this process; its module is dropped."""
    module.GATES["crash"] = gate
    try:
        return module.run_doctest("crash", {"kind": "doctest", "needs": [], "text": text}, module.release(VERSION))
    finally:
        sys.modules.pop("snippets_crash_md", None)


@pytest.mark.parametrize("recorded, status", [
    ("inf\n", "differs"),                                                          # it crashes here
    ("Traceback (most recent call last):\n  ...\nValueError: another error\n", "differs"),
    ("Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero\n", "differs as the page says"),
])
def test_on_a_gated_release_a_crash_is_a_difference_unless_recorded(changed, recorded, status):
    body = _body("crash", CRASH)
    recording = body[: body.index(">>> print(1 /")] + ">>> print(1 / numbers[1])\n" + recorded
    result = _doctest_here(changed, CRASH, _gate(releases=[VERSION], kind="pycon", body=recording))
    assert result.status == status, f"{result.status}: {result.diffs}"
    if status == "differs":
        assert "ZeroDivisionError: division by zero" in "".join(result.diffs), result.diffs
    else:  # the recording ends with the exception: the examples after it are not run
        assert result.matched == 2 and not result.diffs, (result.matched, result.diffs)


@pytest.mark.parametrize("code, stderr, recorded, status", [
    (0, "", "a\nb\n", "differs as the page says"),
    (1, "Traceback (most recent call last):\nAttributeError: no record_event\n",
     "a\nb\n[failed] AttributeError: no record_event\n", "differs as the page says"),
    (1, "Traceback (most recent call last):\nKeyError: 'x'\n", "a\nb\n[failed] AttributeError: no record_event\n",
     "differs"),
    (0, "", "a\nc\n", "differs"),
])
def test_on_a_gated_release_a_script_is_compared_with_its_recorded_output(changed, code, stderr, recorded, status):
    changed.SNIPPETS["crash"] = {"kind": "script", "needs": [], "source": "", "output": "a\nB\n"}
    changed.GATES["crash"] = _gate(releases=[VERSION], kind="text", body=recorded)
    result = changed.Result("crash", 1)
    changed._script_result(result, code, "a\nb\n", stderr, changed.release(VERSION))
    assert result.status == status, (result.status, result.diffs)
    if status == "differs":
        assert f"--- recorded on torch {VERSION}\n+++ printed on torch " in result.diffs[0], result.diffs


def test_a_difference_where_the_page_says_the_output_varies_is_reported_not_failed(changed, capsys):
    """varies_on (snippets/versions.toml): on such a release a differing run is reported as
    varying, with its diff, and does not fail; on any other release the same change fails."""
    release = ".".join(VERSION.split(".")[:2])
    changed.GATES["non_leaf_grad_warning"] = {"since": "1.0", "varies_on": [release], "label": "varies",
                                              "why": "a made-up reason"}
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 0, f"check_guide.py returned {code} where the page says the output varies:\n{stdout}"
    assert "varies from run to run, as the page says" in line_of(stdout, BROKEN_PAGE), stdout
    assert "1 varies from run to run." in stdout and f"Got:\n    {BROKEN_LINE}" in stdout, stdout
    changed.GATES["non_leaf_grad_warning"]["varies_on"] = ["99.0"]
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE], capsys)
    assert code == 1, stdout


def test_the_checker_needs_numpy_for_the_object_collectives(module, changed, monkeypatch):
    for name, snippet in module.SNIPPETS.items():
        code = snippet.get("text") or snippet["source"]
        if re.search(r"\.numpy\(|_object(_list)?\(", code):
            assert "numpy" in snippet["needs"], f"{name} needs numpy, and does not say so"
    monkeypatch.setattr(changed, "_installed", lambda name: name != "numpy")  # a torch without numpy
    text = '```pycon title="crash"\n>>> raise RuntimeError("Numpy is not available")\n```\n'
    result = _doctest_here(changed, text, {"since": "0.0", "label": "", "why": ""})
    assert (result.status, result.why) == ("not run", "numpy"), (result.status, result.diffs)
    script = changed.Result("crash", 1)
    changed._script_result(script, 1, "", "RuntimeError: Numpy is not available\n", changed.release(VERSION))
    assert (script.status, script.why) == ("not run", "numpy"), (script.status, script.diffs)


def test_a_script_that_needs_a_module_torch_needs_there_is_not_run(module):
    """torch 2.9's inductor imports setuptools (torch.utils.cpp_extension), which a venv made by
    uv lacks: the reader is told what to install, not that the page is wrong."""
    name = next(n for n, s in module.SNIPPETS.items() if s["kind"] == "script")
    result = module.Result(name, 1)
    stderr = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'made_up_setuptools'\n"
    module._script_result(result, 1, "", stderr, module.release("2.13"))
    assert (result.status, result.why) == (module.NOT_RUN, "made_up_setuptools")
    result = module.Result(name, 1)
    module._script_result(result, 1, "", "ModuleNotFoundError: No module named 'os'\n", module.release("2.13"))
    assert result.status == module.DIFFERS  # os is there: a real difference


def test_a_warning_gate_compares_its_differs_on_releases_with_their_recordings(module):
    """As tools.snippets.Gate.warns_on: the warning's releases are those since/before exclude, not
    those of differs_on (compared with the guide's recording there)."""
    fields = {"before": "2.14", "differs_on": ["2.9"], "warns": "is deprecated"}
    for release, warns in (((2, 15), True), ((2, 9), False), ((2, 12), False)):
        assert module.gate_warns(fields, release) is warns, release
    assert not module.gate_warns(None, (2, 15))


def test_each_snippet_starts_as_in_a_new_process(module):
    """check_guide.py runs every page in one process: before each snippet it restores what an
    earlier one changed, as the tests do (tools/reader/runtime_fresh.py). Without it, on torch 2.8
    a root handler left by an earlier page printed bitsandbytes' and TransformerLens' log records
    twice or four times, and transformers' warning_once stayed silent: three pages differed."""
    import inspect
    import logging

    import torch

    root, extra = logging.getLogger(), logging.StreamHandler()
    precision = torch._tensor_str.PRINT_OPTS.precision
    module.as_in_a_new_process()  # the first call takes the state to restore
    root.addHandler(extra)
    torch.set_printoptions(precision=precision + 3)
    try:
        functorch = torch._C._functorch
        functorch._grad_increment_nesting()  # a transform level left pushed (torch 2.4's vmap + compile)
        module.as_in_a_new_process()
        assert extra not in root.handlers and torch._tensor_str.PRINT_OPTS.precision == precision
        assert functorch.get_dynamic_layer_stack_depth() == 0
    finally:
        root.removeHandler(extra)
        torch.set_printoptions(precision=precision)
    assert "as_in_a_new_process()" in inspect.getsource(module.run_doctest)


def test_a_module_a_snippet_wrote_is_imported_anew(module, tmp_path):
    """A snippet that writes a module, puts its folder on sys.path and imports it
    (pitfall_grad_mode_off_at_import) runs that module's top level again in the next snippet, as
    a new process does: without it the second copy of that snippet (the Chinese page's, in the
    browser job run alone) printed 'after the import: True'."""
    import builtins
    import importlib
    import sys

    module.as_in_a_new_process()
    (tmp_path / "guide_fresh_probe.py").write_text(
        "import builtins\nbuiltins.guide_probe_runs = getattr(builtins, 'guide_probe_runs', 0) + 1\n")
    try:
        for _ in range(2):
            sys.path.insert(0, str(tmp_path))
            importlib.import_module("guide_fresh_probe")
            module.as_in_a_new_process()
        assert builtins.guide_probe_runs == 2 and str(tmp_path) not in sys.path
        assert "guide_fresh_probe" not in sys.modules
    finally:
        builtins.__dict__.pop("guide_probe_runs", None)


def test_a_script_starts_from_the_environment_the_checker_started_with(module, monkeypatch, tmp_path):
    """A library that an earlier page imports may change os.environ (`import ultralytics` sets
    TORCH_CPP_LOG_LEVEL=ERROR): a script's processes start without it, as in a new shell (found: in
    a whole-guide run it hid the DDP reducer's C++ warning that ddp_higher_order_grads prints)."""
    monkeypatch.delenv("TORCH_CPP_LOG_LEVEL", raising=False)
    try:
        module.keep_environment()
        monkeypatch.setenv("TORCH_CPP_LOG_LEVEL", "ERROR")
        environment = module._script_env(str(tmp_path))
        assert "TORCH_CPP_LOG_LEVEL" not in environment
        assert environment["TMPDIR"] == str(tmp_path / "tmp")
    finally:
        module._ENVIRONMENT.clear()


def test_a_run_in_this_process_leaves_the_suites_temporary_folder_alone(module, capsys, monkeypatch):
    """While main() runs here, the suite's other threads start script runs in temporary folders:
    had main() moved tempfile's folder and TMPDIR to its own and removed it at the end, as a
    reader's run does, their working folders would go with it (main_here keeps them)."""
    before = (tempfile.gettempdir(), os.environ.get("TMPDIR"))
    seen = []
    monkeypatch.setattr(module, "check", lambda pages, args: seen.append((tempfile.gettempdir(), os.environ.get("TMPDIR"))) or 0)
    main_here(module, ["--page", BROKEN_PAGE], capsys)
    assert seen == [before]
