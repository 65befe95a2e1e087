"""Run a snippet's examples as a reader's copied script runs them, and compare what they print
with the page (pinned torch) or with what another release recorded (<folder>/releases/).
Used by the tests (through Sybil) and by the refresher."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import subprocess
import sys
import traceback
import types
import warnings
from pathlib import Path

from sybil.evaluators.doctest import OutputChecker
from sybil.parsers.abstract import DocTestStringParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

from tools.examples.scripts import script_output
from tools.snippets import releases
from tools.snippets.model import FLAGS, ROOT, Snippet, rel


def run_as_script(source: str, namespace: dict, filename: str, echoes: list | None = None) -> str:
    """Run one example's code as a copied script runs it, and return what it printed.

    A bare expression prints nothing, as in a script. With `echoes`, the example is compiled as
    the >>> prompt compiles it (doctest's "single" mode) and each value the prompt would echo
    there (anything but None) is appended to `echoes` instead of being printed: a transcript that
    does not show it would be false at a real prompt.
    """
    printed = io.StringIO()
    mode = "exec"
    if echoes is not None:
        try:
            code = compile(source, filename, "single")
            mode = "single"
        except SyntaxError:  # not one interactive statement: run it as a script
            code = compile(source, filename, "exec")
    else:
        code = compile(source, filename, "exec")
    hook = sys.displayhook
    if mode == "single":
        sys.displayhook = lambda value: echoes.append(value) if value is not None else None
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
    finally:
        sys.displayhook = hook
    return printed.getvalue()


def echo_message(source: str, echoes: list, where: str) -> str:
    """Why an example is false at the >>> prompt: the values it would echo there."""
    reprs = [_short_repr(value) for value in echoes]
    shown = reprs[0] + (f" ({len(reprs)} values)" if len(reprs) > 1 else "")
    statement = source.strip().splitlines()[0]
    return (f"{where}: pasted at a >>> prompt, `{statement}` also shows {shown}, which the transcript "
            "does not: assign the value (`_ = ...`) or print it and show its output")


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails still echoes something
        text = f"<{type(value).__name__}>"
    text = re.sub(r"0x[0-9a-fA-F]+", "0x...", " ".join(text.split()))
    return text if len(text) <= 80 else text[:77] + "..."


class ScriptEvaluator:
    """Sybil evaluator: runs each ``>>>`` example as part of the copied script, in the document's
    module namespace and in page order, and compares what it printed with the expected output.

    So the examples of one fence, run in order, are the script the copy button gives a reader.
    """

    def __init__(self, optionflags: int = FLAGS) -> None:
        self.optionflags = optionflags
        self.checker = OutputChecker()  # Sybil's: ignores trailing whitespace, as editors do

    def __call__(self, example) -> str | None:
        parsed: doctest.Example = example.parsed
        echoes: list = []
        printed = run_as_script(parsed.source, example.namespace, f"{example.path}:{example.line}", echoes)
        if self.checker.check_output(parsed.want, printed, self.optionflags):
            if echoes:
                path = Path(example.path).resolve()
                where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{example.line}"
                return echo_message(parsed.source, echoes, where)
            return None
        hint = ("" if printed or not parsed.want else
                "\nA bare expression shows its value at the >>> prompt but not in a script: print() it.")
        return self.checker.output_difference(parsed, printed, self.optionflags) + hint


class PyconParser:
    """Sybil parser for ```` ```pycon ```` fences, attributes such as ``title=`` allowed.

    Sybil's own Markdown parser only collects ```` ```python ```` fences and silently skips one
    whose info string carries a title, so it is not used for snippets.
    """

    def __init__(self, optionflags: int = FLAGS) -> None:
        self.lexer = FencedCodeBlockLexer(
            language=r"pycon(?:[ \t][^\n]*)?",
            mapping={"language": "arguments", "source": "source"},
        )
        self.string_parser = DocTestStringParser(ScriptEvaluator(optionflags))

    def __call__(self, document):
        for lexed in self.lexer(document):
            source = lexed.lexemes["source"]
            for region in self.string_parser(source, document.path):
                region.adjust(lexed, source)
                yield region


def module_globals(name: str) -> dict:
    """The globals of a fresh module registered in ``sys.modules``, to run a snippet in.

    A copied script runs as ``__main__``, a real module. torch.compile reaches a function's
    globals through ``sys.modules[__name__]`` when it builds its guards, so a snippet run in a
    plain dict fails there although the copied script works.
    """
    module = types.ModuleType(re.sub(r"\W", "_", name))
    sys.modules[module.__name__] = module
    return module.__dict__


# --- Release outputs: what a gated snippet prints on the releases its page's output skips ------

def exception_line(err: BaseException) -> str:
    """How a recorded release output shows an exception: its type and its message's first line
    (the rest of a message can name this machine's paths and the snippet's file)."""
    last = traceback.format_exception_only(type(err), err)[-1]  # "Type: message", exceptions and all
    name, _, message = last.partition(":")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return (f"{name}: {first}" if first else name.rstrip()) + "\n"


def _not_recorded(rel: str, recorded_at: str, version: str) -> str:
    return (f"{rel} prints something else on torch {version} (snippets/versions.toml), and {recorded_at} "
            f"has no output recorded for it: on torch {version}, run `python -m tools.examples.refresh_outputs "
            "--release` (`RECORD=1 make matrix` does) and review the diff")


def release_problems(path: Path, version: str, namespace: dict) -> str | None:
    """Run a snippet (.md) on this torch (`version`, excluded by its gate) and compare it with
    what <its folder>/releases/<name>.md recorded for this release; None if it printed exactly that.

    The recorded transcript must hold the snippet's own code: it ends early only after an example
    that raised, and that exception (type and message) is then the output compared."""
    snippet = Snippet.load(path)
    recorded_at = rel(releases.path(snippet.name))
    section = releases.for_release(snippet.name, version)
    if section is None:
        return _not_recorded(snippet.rel, recorded_at, version)
    recorded, page = section.examples(), snippet.examples()
    if [e.source for e in recorded] != [e.source for e in page[: len(recorded)]]:
        return (f"{recorded_at} (torch {', '.join(section.releases)}) was recorded from other code than "
                f"{snippet.rel} holds now: record it again on torch {version}")
    # Another release's warnings go to stderr, which is not compared; as errors (the tests' filter)
    # they would end a run that a reader sees go on. The refresher records under the same filter.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _compare_recorded(snippet, recorded, recorded_at, version, namespace)


def _compare_recorded(snippet: "Snippet", recorded: list, recorded_at: str, version: str,
                      namespace: dict) -> str | None:
    checker = OutputChecker()
    offset = snippet.text[: snippet.fence.start("body")].count("\n") + 1
    for example in recorded:
        where = f"{snippet.rel}:{offset + example.lineno} on torch {version}"
        echoes: list = []
        try:
            printed = run_as_script(example.source, namespace, where, echoes)
        except Exception as err:
            raised = exception_line(err)
            if example.exc_msg is not None and checker.check_output(example.exc_msg, raised, FLAGS):
                return None  # the recorded end of the run
            return (f"{where} raised, which {recorded_at} does not record:\n"
                    + "".join(traceback.format_exception(type(err), err, err.__traceback__)[-6:]))
        if example.exc_msg is not None:
            return f"{where}: {recorded_at} records {example.exc_msg.strip()!r}, and nothing was raised"
        if not checker.check_output(example.want, printed, FLAGS):
            return (f"{where} printed something other than {recorded_at} records:\n"
                    + checker.output_difference(example, printed, FLAGS))
        if echoes:
            return echo_message(example.source, echoes, where)
    return None


def release_script_problems(path: Path, version: str, result: "subprocess.CompletedProcess[str]") -> str | None:
    """A script snippet's run on a release its gate excludes, against its recorded output."""
    recorded_at = rel(releases.path(path.stem))
    section = releases.for_release(path.stem, version)
    shown = rel(path)
    if section is None:
        return _not_recorded(shown, recorded_at, version)
    got = releases.script_body(script_output(result), result.returncode, result.stderr)
    if got == section.body:
        return None
    import difflib

    diff = "".join(difflib.unified_diff(section.body.splitlines(keepends=True), got.splitlines(keepends=True),
                                        f"{recorded_at} (torch {', '.join(section.releases)})",
                                        f"printed on torch {version}"))
    return f"{shown} printed something other than {recorded_at} records:\n{diff}\n{result.stderr[-3000:]}"
