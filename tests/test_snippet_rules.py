"""Rules every snippet keeps, so that what a reader sees and copies is what the tests prove."""

import doctest
import re

import pytest

from sybil import Sybil
from sybil.example import SybilFailure

from tools.examples.evaluate import PyconParser, module_globals
from tools.snippets import FLAGS, load_all

SNIPPETS = load_all()
by_name = pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.name for s in SNIPPETS])

# The only places where an expected output may say "...": values that change from machine to
# machine and are never what the page is about.
ALLOWED_ELLIPSIS = [
    re.compile(r"\b0x\.\.\."),                              # memory address
    re.compile(r"\(\.\.\.\)is not tracked"),                # an object's id(), in decimal
    re.compile(r"\(Triggered internally at\.\.\.\)"),      # path inside the torch build
    re.compile(r'File "\.\.\.", line'),                     # the example's file in a traceback
]
RANDOMNESS = re.compile(r"torch\.(randn|rand|randint|randperm|normal|bernoulli)\b|nn\.(Linear|Conv\dd)\(")


def test_there_are_snippets():
    assert SNIPPETS, "no snippet found under snippets/"


@by_name
def test_one_pycon_fence_titled_with_the_file_name(snippet):
    fences = snippet.fences()
    assert len(fences) == 1, f"{snippet.rel}: {len(fences)} ```pycon fences, expected exactly 1"
    assert snippet.title == snippet.name, (
        f'{snippet.rel}: the fence must read ```pycon title="{snippet.name}"```, '
        f"so page, snippet and test id share one name"
    )
    assert snippet.examples(), f"{snippet.rel}: the fence holds no >>> example"


@pytest.mark.parametrize(("line", "passes"), [("print(total)", True), ("total", False)])
def test_examples_run_as_the_copied_script_runs(tmp_path, line, passes):
    """Sybil runs each >>> example in "exec" mode, in one module per file, in page order: that is
    the script the copy button gives. A value only the >>> prompt would show must fail."""
    page = tmp_path / "bare.md"
    page.write_text(f'```pycon title="bare"\n>>> total = 1 + 1\n>>> {line}\n2\n```\n')
    document = Sybil(parsers=[PyconParser()], path=str(tmp_path)).parse(page)
    document.namespace = module_globals(f"rules_{line}")
    results = []
    for example in document.examples():
        try:
            example.evaluate()
            results.append("ok")
        except SybilFailure as failure:
            results.append(str(failure))
    assert results[0] == "ok"
    if passes:
        assert results[1] == "ok"
    else:
        assert "print() it" in results[1], results[1]


@by_name
def test_no_uncaught_exception(snippet):
    """A traceback would stop a copied script: catch the expected error and print it."""
    for example in snippet.examples():
        assert not example.want.startswith("Traceback (most recent call last)"), (
            f"{snippet.rel}, line {example.lineno + 1}: expected output is a traceback; "
            "wrap the call in try/except and print the error"
        )


@by_name
def test_ellipsis_only_for_addresses_and_paths(snippet):
    for example in snippet.examples():
        rest = example.want
        for allowed in ALLOWED_ELLIPSIS:
            rest = allowed.sub("", rest)
        for line in rest.splitlines():
            assert "..." not in line, (
                f"{snippet.rel}: '...' in the expected output {line!r} would swallow a value; "
                "ELLIPSIS is only for memory addresses and paths"
            )


@by_name
def test_every_output_line_counts(snippet):
    """Changing or deleting any single expected line must make the example fail."""
    checker = doctest.OutputChecker()
    for example in snippet.examples():
        lines = example.want.splitlines(keepends=True)
        for index, line in enumerate(lines):
            changed = lines[:index] + [line.rstrip("\n") + " changed\n"] + lines[index + 1 :]
            deleted = lines[:index] + lines[index + 1 :]
            for mutant in ("".join(changed), "".join(deleted)):
                assert not checker.check_output(mutant, example.want, FLAGS), (
                    f"{snippet.rel}: output line {line.strip()!r} can change without a failure"
                )


@by_name
def test_randomness_is_seeded(snippet):
    script = snippet.script()
    if RANDOMNESS.search(script):
        assert "torch.manual_seed(" in script, (
            f"{snippet.rel}: uses random numbers or initialised layers without torch.manual_seed"
        )


@pytest.mark.parametrize(("line", "passes"), [("_ = {}.setdefault('a', 1)", True), ("{}.setdefault('a', 1)", False),
                                              ("for n in (1, 2):\n...     {}.setdefault('a', n)", False)])
def test_a_value_the_prompt_would_echo_must_be_shown_or_assigned(tmp_path, line, passes):
    """Pasted at >>>, a bare expression that is not None echoes (in a loop too); as a script it
    prints nothing. A transcript that shows neither is false at the prompt."""
    page = tmp_path / "echo.md"
    page.write_text(f'```pycon title="echo"\n>>> {line}\n>>> print("done")\ndone\n```\n')
    document = Sybil(parsers=[PyconParser()], path=str(tmp_path)).parse(page)
    document.namespace = module_globals(f"echo_{passes}_{len(line)}")
    try:
        for example in document.examples():
            example.evaluate()
        outcome = "ok"
    except SybilFailure as failure:
        outcome = str(failure)
    if passes:
        assert outcome == "ok", outcome
    else:
        assert "pasted at a >>> prompt" in outcome and "1" in outcome and "`_ = ...`" in outcome, outcome


MID_BLOCK_BLANK = re.compile(r"^\.\.\.[ \t]*\n(?=\.\.\. [ \t]*\S)", re.MULTILINE)


def blank_lines_inside_a_block(text: str) -> list[int]:
    """Line numbers of a blank `...` line with more of the same statement after it."""
    return [text[: m.start()].count("\n") + 1 for m in MID_BLOCK_BLANK.finditer(text)]


@by_name
def test_no_blank_line_inside_a_class_or_function(snippet):
    """At a real >>> prompt an empty line ends a compound statement: a class whose methods are
    separated by a blank `...` line loses the rest of its body there (IndentationError), though
    doctest and the copy button are fine. A blank `...` line may only end the statement."""
    lines = blank_lines_inside_a_block(snippet.text)
    assert not lines, (f"{snippet.rel}: lines {lines}: a blank `...` line inside a statement ends it at a "
                       "real >>> prompt; delete it")


def test_the_blank_line_rule_can_fail():
    text = ">>> class F:\n...     def a(self):\n...         pass\n...\n...     def b(self):\n...         pass\n...\n>>> F()\n"
    assert blank_lines_inside_a_block(text) == [4]
