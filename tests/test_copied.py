"""How the browser test learns what a copied block prints without running it a third time
(tests/run_copied.py): a copy equal to a snippet's code, or to a script snippet, is recognised, and
an example outcome it cannot rely on makes the copy run after all."""

from __future__ import annotations

from tests import run_copied
from tests.test_examples import OUTCOMES, examples_passed
from tools.snippets import ROOT, Snippet, script_paths

SNIPPET = "snippets/shared/retain_grad.md"


def test_a_copy_equal_to_a_snippet_or_a_script_is_recognised():
    snippet = Snippet.load(ROOT / SNIPPET)
    assert run_copied.same_snippet(snippet.script()) == SNIPPET
    assert run_copied.same_snippet(snippet.script() + "\n\n") == SNIPPET  # a copy's trailing blank lines
    assert run_copied.same_snippet(snippet.script().replace("(", "( ", 1)) is None
    script = script_paths()[0]
    assert run_copied.same_script(script.read_text(encoding="utf-8")) == script.relative_to(ROOT).as_posix()
    assert run_copied.same_script(script.read_text(encoding="utf-8") + "print()\n") is None


def test_a_copy_with_comment_lines_is_recognised():
    """A `>>> # ...` line is no doctest example, but the copy button copies it: the snippet's code
    keeps it (before, 78 snippets' copies went unrecognised and ran a second time: 27 CPU-s)."""
    name = "snippets/captum/captum_saliency_resnet.md"
    snippet = Snippet.load(ROOT / name)
    assert ">>> # " in snippet.text
    shown = [line[4:] for line in snippet.fence["body"].splitlines() if line.startswith((">>> ", "... "))]
    assert snippet.script() == "".join(line + "\n" for line in shown)
    assert run_copied.same_snippet("\n".join(shown)) == name


def test_without_every_example_passed_the_copy_runs_once(monkeypatch):
    """Examples not run in this session, or one of them failed: the copy runs, and prints what the
    snippet shows (tools/examples/evaluate.py's ScriptEvaluator holds the same). The other
    language's copy of the same code reads that run instead of running again in this process."""
    snippet = Snippet.load(ROOT / SNIPPET)
    monkeypatch.setattr(run_copied, "_RAN_HERE", {})
    monkeypatch.setitem(OUTCOMES, SNIPPET, {})
    assert not examples_passed(SNIPPET)
    ran = []
    monkeypatch.setattr(run_copied, "run_pycon", lambda text, index: ran.append(text) or
                        {"ok": True, "stdout": "ran", "error": ""})
    assert run_copied.as_its_examples_ran(SNIPPET, snippet.script(), 0)["stdout"] == "ran"
    assert run_copied.as_its_examples_ran(SNIPPET, snippet.script(), 7)["stdout"] == "ran"
    assert len(ran) == 1
    monkeypatch.setattr(run_copied, "_RAN_HERE", {})
    monkeypatch.setitem(OUTCOMES, SNIPPET, {f"tests/test_examples.py::test_example[{SNIPPET}:{e.lineno}]": "failed"
                                            for e in snippet.examples()})
    assert run_copied.as_its_examples_ran(SNIPPET, snippet.script(), 0)["stdout"] == "ran"
    assert len(ran) == 2


def test_the_copy_runs_and_prints_what_the_snippet_shows():
    snippet = Snippet.load(ROOT / SNIPPET)
    result = run_copied.run_pycon(snippet.script(), 0)
    assert result["ok"], result["error"]
    assert result["stdout"] == snippet.expected_output()


def test_a_copy_run_here_has_the_warning_filters_of_a_new_python_process(monkeypatch):
    """Run in the test process (the browser tests alone), a copy meets Python's own filters, as in
    the reader's process and in tests/run_copied.py's, not pytest's "error"."""
    import subprocess
    import sys
    import warnings

    fresh = subprocess.run([sys.executable, "-c", "import warnings; print([(f[0], f[2].__name__, "
                            "getattr(f[3], 'pattern', f[3]) or '') for f in warnings.filters])"],
                           capture_output=True, text=True, check=True, env={}).stdout.strip()
    assert fresh == str([(a, c.__name__, m) for a, c, m in run_copied.READER_WARNING_FILTERS])
    seen = []
    monkeypatch.setattr(run_copied, "_RAN_HERE", {})
    monkeypatch.setitem(OUTCOMES, SNIPPET, {})
    monkeypatch.setattr(run_copied, "run_pycon", lambda text, index: seen.append(
        warnings.filters[:len(run_copied.READER_WARNING_FILTERS)]) or {"ok": True, "stdout": "", "error": ""})
    run_copied.as_its_examples_ran(SNIPPET, "", 0)
    assert [(f[0], f[2], getattr(f[3], "pattern", f[3]) or "") for f in seen[0]] == run_copied.READER_WARNING_FILTERS
