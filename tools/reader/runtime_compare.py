# check_guide.py, its part on comparing outputs as the guide's tests do, the version gates, each
# example's result, and the tracebacks a reader sees. tools/reader/checker.py joins the parts (its
# PARTS, in order) into that one file and leaves out this preamble: the names the part takes from
# the parts before it (runtime_head.py only), for reading and linting it on its own.
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import contextlib
    import copy
    import doctest
    import importlib.util
    import io
    import os
    import re
    import sys
    import traceback
    import types
    import warnings

    from tools.reader.runtime_head import LIBRARIES
# --- end of the preamble: check_guide.py goes on below ---

# --- Comparing outputs: what the guide's tests do (doctest's checker, as Sybil configures it) ---

FLAGS = doctest.ELLIPSIS  # "..." stands for a memory address or a path; nothing else is loose
FENCE = re.compile(r"^```pycon(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_TRAILING_WHITESPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_WHITESPACE_BEFORE_ELLIPSIS = re.compile(r"[ \t]+(?=\.\.\.$)", re.MULTILINE)


class OutputChecker(doctest.OutputChecker):
    """doctest's checker, ignoring trailing whitespace as editors strip it (Sybil's rule)."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        want = _TRAILING_WHITESPACE.sub("", want)
        got = _TRAILING_WHITESPACE.sub("", got)
        if optionflags & doctest.ELLIPSIS:  # trailing spaces of got are gone: drop them before "..."
            want = _WHITESPACE_BEFORE_ELLIPSIS.sub("", want)
        return doctest.OutputChecker.check_output(self, want, got, optionflags)

    def output_difference(self, example: doctest.Example, got: str, optionflags: int) -> str:
        example = copy.copy(example)  # show no whitespace difference that check_output ignores
        example.want = _TRAILING_WHITESPACE.sub("", example.want)
        got = _TRAILING_WHITESPACE.sub("", got)
        return doctest.OutputChecker.output_difference(self, example, got, optionflags)


CHECKER = OutputChecker()


def module_globals(name: str) -> dict:
    """A fresh module registered in sys.modules: a copied script runs as a real module, and
    torch.compile reaches a function's globals through sys.modules[__name__]."""
    module = types.ModuleType(re.sub(r"\W", "_", name))
    sys.modules[module.__name__] = module
    return module.__dict__


def run_as_script(source: str, namespace: dict, filename: str) -> str:
    """One example, run as the copied script runs it ("exec": a bare expression prints nothing)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, filename, "exec"), namespace)
    return printed.getvalue()


def script_output(stdout: str) -> str:
    """A script's stdout as the guide stores it: trailing spaces dropped, one newline per line."""
    return "".join(line.rstrip() + "\n" for line in stdout.splitlines())


# --- Version gates: outputs the pages say differ on some torch releases ----------------------

def release(version: str) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor)


def gate_excludes(gate: dict, current: tuple[int, int]) -> bool:
    """True on a release where the page says this example prints something else."""
    return bool(
        (gate.get("since") and current < release(gate["since"]))
        or (gate.get("before") and current >= release(gate["before"]))
        or current in {release(v) for v in gate.get("differs_on", [])}
    )


def gate_warns(gate: dict | None, current: tuple[int, int]) -> bool:
    """The page's output, with the gate's warning beside it: a release its since/before exclude
    (one in differs_on is compared with the guide's recording instead)."""
    return (gate is not None and bool(gate.get("warns")) and gate_excludes(gate, current)
            and current not in {release(v) for v in gate.get("differs_on", [])})


def recording(gate: dict, current: tuple[int, int]) -> dict | None:
    """What the example printed in the guide's run of this release (major.minor), if it ran it:
    {"releases": [...], "kind": "pycon" (a transcript) or "text" (a script's output), "body"}."""
    return next((section for section in gate.get("recorded", [])
                 if current in {release(v) for v in section["releases"]}), None)


def gate_note(gate: dict) -> str:
    return f"{gate['label']}: {gate['why']}"


def _torch(current: tuple[int, int]) -> str:
    return f"torch {current[0]}.{current[1]}"


def apply_warning_filters(filters: list[str]) -> None:
    """The tests' warning filters (pytest's `filterwarnings`): a warning an example does not
    catch itself is an error, except those listed. Later entries take precedence, as in pytest."""
    for entry in filters:
        action, message, category, module, lineno = (entry.split(":", 4) + [""] * 5)[:5]
        warnings.filterwarnings(
            action.strip(), message.strip(), _category(category.strip()), module.strip(),
            int(lineno) if lineno.strip() else 0,
        )


def _category(name: str) -> type:
    if not name:
        return Warning
    if "." not in name:
        import builtins

        return getattr(builtins, name)
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


# --- Results --------------------------------------------------------------------------------

PASSED, DIFFERS, GATED, NOT_RUN = "passed", "differs", "differs as the page says", "not run"
VARIES = "varies from run to run, as the page says"


class Result:
    """The outcome of one snippet: a doctest transcript or a script."""

    def __init__(self, name: str, examples: int = 0) -> None:
        self.name = name
        self.examples = examples       # >>> examples (1 for a script)
        self.matched = 0
        self.status = PASSED
        self.why = ""                  # not run: the libraries it needs; gated: the page's note
        self.note = ""                 # on a release its gate excludes: the page's note
        self.diffs: list[str] = []     # the differences, for --diff


def missing_libraries(names) -> list[str]:
    """The libraries of `names` that are not installed."""
    return [name for name in names if not _installed(name)]


def _installed(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


NO_NUMPY = "Numpy is not available"  # torch's RuntimeError where it needs numpy (pip's torch lacks it)


def _missing_from(error: BaseException) -> str | None:
    """The guide's optional library an exception is about, if it is not installed."""
    if not isinstance(error, ImportError):
        return "numpy" if NO_NUMPY in str(error) and not _installed("numpy") else None
    top = (getattr(error, "name", None) or "").split(".")[0]
    if top in LIBRARIES and not _installed(top):
        return top
    for name in LIBRARIES:  # libraries that check for another one say so in their message
        if re.search(rf"\b{re.escape(name)}\b", str(error)) and not _installed(name):
            return name
    if isinstance(error, ModuleNotFoundError) and top and top != "torch" and not _installed(top):
        return top  # a module torch itself needs there (setuptools, for inductor on torch 2.9)
    return None


def _settle(result: Result, gate: dict | None, excluded: bool, recorded: dict | None,
            current: tuple[int, int]) -> None:
    """The status from the differences found. On a release the gate excludes, the example was
    compared with the guide's recording of it (`recorded`), or, without one, with the page."""
    if result.status == NOT_RUN:
        return
    if excluded:
        result.note = gate_note(gate)
    if result.diffs and gate is not None and current in {release(v) for v in gate.get("varies_on", [])}:
        result.status, result.why = VARIES, gate_note(gate)  # reported, not a failure
    elif excluded and not gate_warns(gate, current) and recorded is not None:
        result.status = DIFFERS if result.diffs else GATED
        result.why = "" if result.diffs else result.note
    elif result.diffs:
        result.status = DIFFERS
        if excluded and not gate_warns(gate, current):
            result.diffs.insert(0, f"The guide has no recorded output of this example for {_torch(current)}; the "
                                   f"page's note says it differs ({result.note}). It printed something other "
                                   "than the page shows:\n")
    else:
        result.status = PASSED


# --- Tracebacks: the examples' frames, not the checker's ---------------------------------------

_THIS = os.path.realpath(__file__)


def reader_traceback(error: BaseException, sources: dict | None = None) -> str:
    """An exception's traceback without the checker's own frames; the lines of an example's
    frames (its code has no file) come from `sources`: file name -> code."""
    report = traceback.TracebackException(type(error), error, error.__traceback__)
    seen: set = set()
    pending = [report]
    while pending:
        each = pending.pop()
        if each is None or id(each) in seen:
            continue
        seen.add(id(each))
        frames = []
        for frame in each.stack:
            if frame.filename.startswith("<frozen importlib") or os.path.realpath(frame.filename) == _THIS:
                continue
            if frame.filename in (sources or {}):
                lines = sources[frame.filename].splitlines()
                line = lines[frame.lineno - 1].strip() if 0 < (frame.lineno or 0) <= len(lines) else None
                frame = traceback.FrameSummary(frame.filename, frame.lineno, frame.name, line=line)
            frames.append(frame)
        each.stack = traceback.StackSummary.from_list(frames)
        pending += [each.__cause__, each.__context__]
    lines = "".join(report.format()).rstrip("\n").split("\n")
    if len(lines) > 24:
        lines = lines[:1] + ["  ... (the outer frames)"] + lines[-22:]
    return "\n".join(lines) + "\n"


def exception_line(error: BaseException) -> str:
    """How the guide records an exception on another release: its type and the first line of its
    message (tools.examples.evaluate.exception_line)."""
    last = traceback.format_exception_only(type(error), error)[-1]
    name, _, message = last.partition(":")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return (f"{name}: {first}" if first else name.rstrip()) + "\n"


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.rstrip("\n").split("\n"))


def _noun(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")
