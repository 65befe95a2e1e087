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


def test_without_every_example_passed_the_copy_runs(monkeypatch):
    """Examples not run in this session, or one of them failed: the copy runs, and prints what the
    snippet shows (tools/examples/evaluate.py's ScriptEvaluator holds the same)."""
    snippet = Snippet.load(ROOT / SNIPPET)
    monkeypatch.setitem(OUTCOMES, SNIPPET, {})
    assert not examples_passed(SNIPPET)
    ran = []
    monkeypatch.setattr(run_copied, "run_pycon", lambda text, index: ran.append(text) or
                        {"ok": True, "stdout": "ran", "error": ""})
    assert run_copied.as_its_examples_ran(SNIPPET, snippet.script(), 0)["stdout"] == "ran"
    monkeypatch.setitem(OUTCOMES, SNIPPET, {f"tests/test_examples.py::test_example[{SNIPPET}:{e.lineno}]": "failed"
                                            for e in snippet.examples()})
    assert run_copied.as_its_examples_ran(SNIPPET, snippet.script(), 0)["stdout"] == "ran"
    assert len(ran) == 2


def test_the_copy_runs_and_prints_what_the_snippet_shows():
    snippet = Snippet.load(ROOT / SNIPPET)
    result = run_copied.run_pycon(snippet.script(), 0)
    assert result["ok"], result["error"]
    assert result["stdout"] == snippet.expected_output()
