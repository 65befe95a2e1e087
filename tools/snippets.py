"""One definition of what a snippet is, shared by the tests and the refresh command.

A snippet is ``snippets/<name>.md`` holding exactly one ```` ```pycon title="<name>" ```` fence:
a doctest transcript whose code and expected output are included byte-for-byte by the English
and the Chinese page.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import subprocess
import sys
import tempfile
import traceback
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

from sybil.evaluators.doctest import OutputChecker
from sybil.parsers.abstract import DocTestStringParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DOCS = ROOT / "docs"

# ELLIPSIS only, for memory addresses and file paths; tests/test_snippet_rules.py enforces where
# "..." may stand. No NORMALIZE_WHITESPACE and no NUMBER: outputs are regenerated, so they match
# exactly.
FLAGS = doctest.ELLIPSIS

FENCE = re.compile(
    r"^```pycon(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)
TITLE = re.compile(r'title="(?P<title>[^"]+)"')


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


@dataclass
class Snippet:
    path: Path
    text: str

    @property
    def name(self) -> str:
        return self.path.stem

    @classmethod
    def load(cls, path: Path) -> "Snippet":
        return cls(path, path.read_text(encoding="utf-8"))

    def fences(self) -> list[re.Match]:
        return list(FENCE.finditer(self.text))

    @property
    def fence(self) -> re.Match:
        found = self.fences()
        if len(found) != 1:
            raise ValueError(f"{self.rel}: expected one ```pycon fence, found {len(found)}")
        return found[0]

    @property
    def rel(self) -> str:
        try:
            return self.path.relative_to(ROOT).as_posix()
        except ValueError:  # a snippet outside the project (a test's own)
            return self.path.as_posix()

    @property
    def title(self) -> str | None:
        match = TITLE.search(self.fence["info"])
        return match["title"] if match else None

    def examples(self) -> list[doctest.Example]:
        return doctest.DocTestParser().get_examples(self.fence["body"], self.rel)

    def script(self) -> str:
        """What Material's copy button copies: the code, without prompts or output."""
        return "".join(example.source for example in self.examples())

    def expected_output(self) -> str:
        return "".join(example.want for example in self.examples())


def module_globals(name: str) -> dict:
    """The globals of a fresh module registered in ``sys.modules``, to run a snippet in.

    A copied script runs as ``__main__``, a real module. torch.compile reaches a function's
    globals through ``sys.modules[__name__]`` when it builds its guards, so a snippet run in a
    plain dict fails there although the copied script works.
    """
    module = types.ModuleType(re.sub(r"\W", "_", name))
    sys.modules[module.__name__] = module
    return module.__dict__


# --- Version gates: where a snippet's output holds on some torch releases only ------------------

VERSION_GATES = SNIPPETS / "versions.toml"


@dataclass(frozen=True)
class Gate:
    """snippets/versions.toml entry: the releases on which the page's output does not hold.

    since = "X.Y": it holds from X.Y on; before = "X.Y": up to, not including, X.Y;
    differs_on = ["X.Y", ...]: not on these releases (a difference that came and went).
    varies_on = ["X.Y", ...]: on these releases the output changes from run to run (the page says
    how); a run that differs there is reported as such (an expected failure, never a pass).
    """

    name: str
    why: str
    since: str | None = None
    before: str | None = None
    differs_on: tuple[str, ...] = ()
    warns: str | None = None  # outside the range: same output, plus this warning from torch
    varies_on: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "differs_on", tuple(self.differs_on))
        object.__setattr__(self, "varies_on", tuple(self.varies_on))
        if not (self.since or self.before or self.differs_on):
            raise ValueError(f"snippets/versions.toml [{self.name}]: give since, before or differs_on")

    def excludes(self, release: tuple[int, int]) -> bool:
        """True on a torch release where the snippet is expected to print something else."""
        since = _release(self.since) if self.since else None
        before = _release(self.before) if self.before else None
        return bool(
            (since and release < since)
            or (before and release >= before)
            or release in {_release(v) for v in self.differs_on}
        )

    def varies(self, release: tuple[int, int]) -> bool:
        """True on a release where the output changes from run to run (the page says how)."""
        return release in {_release(v) for v in self.varies_on}

    @property
    def releases(self) -> list[str]:
        """The releases the page must name next to the snippet."""
        return [v for v in (self.since, self.before) if v] + list(self.differs_on)

    @property
    def label(self) -> str:
        parts = []
        if self.since:
            parts.append(f"torch {self.since}+")
        if self.before:
            parts.append(f"before torch {self.before}")
        if self.differs_on:
            parts.append("differs on torch " + ", ".join(self.differs_on))
        if self.varies_on:
            parts.append("varies from run to run on torch " + ", ".join(self.varies_on))
        return "; ".join(parts)


def _release(version: str) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor)


def version_gates() -> dict[str, Gate]:
    import tomllib

    if not VERSION_GATES.exists():
        return {}
    table = tomllib.loads(VERSION_GATES.read_text(encoding="utf-8"))
    return {name: Gate(name, **fields) for name, fields in table.items()}


def torch_release() -> tuple[int, int]:
    import torch

    return _release(torch.__version__)


def snippet_paths() -> list[Path]:
    return sorted(SNIPPETS.glob("*.md"))


# --- Script snippets: programs a doctest cannot hold (several processes), with their output ---

SCRIPT_TIMEOUT = 300  # seconds; a hung distributed run must not hang the suite
DISTRIBUTED_TIMEOUT = 90  # seconds for each distributed script in the shared run (its gloo timeout is 60)


def script_paths() -> list[Path]:
    """snippets/<name>.py, each with its expected stdout in snippets/<name>.out."""
    return sorted(SNIPPETS.glob("*.py"))


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float,
         what: str) -> "subprocess.CompletedProcess[str]":
    """Run command in a session of its own: on timeout every process it started (the workers of
    a distributed run too) is killed, and the result says which run it was."""
    process = subprocess.Popen(command, cwd=cwd, env=env, text=True, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        stdout, stderr = process.communicate()
        stderr += f"\n{what} did not finish in {timeout:.0f} s: killed, with every process it started"
        return subprocess.CompletedProcess(command, -9, stdout, stderr)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _script_env(cache: str) -> dict[str, str]:
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TORCHINDUCTOR_VEC_ISA_OK": "0"}


def run_script(path: Path, timeout: float = SCRIPT_TIMEOUT) -> "subprocess.CompletedProcess[str]":
    """Run a script snippet as a reader would, from its folder, in a fresh inductor cache.

    TORCHINDUCTOR_VEC_ISA_OK=0 skips inductor's probe of the CPU's vector instruction sets
    (test programs compiled with g++ on every fresh cache): it changes the speed of the generated
    code, not its results, and saves the suite more than ten seconds.
    """
    with tempfile.TemporaryDirectory(prefix="guide-inductor-") as cache:
        return _run([sys.executable, path.name], path.parent, _script_env(cache), timeout,
                    f"snippets/{path.name}")


# The end of every distributed script snippet, byte for byte: what `python <name>.py` runs is
# worker(rank, 2, port) in two processes, which is what run_distributed() runs for each.
DISTRIBUTED_MAIN = '''

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
'''


def is_distributed(path: Path) -> bool:
    return "def worker(rank, world_size, port):" in path.read_text(encoding="utf-8")


def run_distributed(paths: list[Path], timeout: float = SCRIPT_TIMEOUT, cwd: Path = SNIPPETS
                    ) -> "dict[Path, subprocess.CompletedProcess[str]]":
    """Run several distributed script snippets from ONE process (tools/distributed_runner.py),
    which imports torch once and forks each script's two workers from there: a script run on its
    own costs a torch import in each of its processes. Each script gets DISTRIBUTED_TIMEOUT
    seconds (at most `timeout`). Returns, per script, what its own run would return: rank 0's
    output then rank 1's, and a non-zero code if either rank raised or the script was killed.
    The runner works in `cwd`; its temporary folder is each result's args[2]."""
    with tempfile.TemporaryDirectory(prefix="guide-distributed-") as folder:
        names = ", ".join(p.name for p in paths)
        runner = ROOT / "tools" / "distributed_runner.py"
        each = min(DISTRIBUTED_TIMEOUT, timeout)
        run = _run([sys.executable, str(runner), folder, str(each), *map(str, paths)],
                   cwd, _script_env(folder), each * len(paths) + 60,
                   f"the shared two-process run of {names} (tools/distributed_runner.py)")
        results = {}
        for path in paths:
            files = {f.name: f.read_text(encoding="utf-8", errors="replace")
                     for f in Path(folder).glob(f"{path.stem}.*")}
            codes = [files.get(f"{path.stem}.rank{rank}.code") for rank in (0, 1)]
            if None in codes:  # the run died or was killed before this script ended
                results[path] = subprocess.CompletedProcess(run.args, run.returncode or -1, "",
                                                           f"snippets/{path.name}: {run.stderr}")
                continue
            stdout = "".join(files.get(f"{path.stem}.rank{r}.stdout", "") for r in (0, 1))
            stderr = "".join(files.get(f"{path.stem}.rank{r}.stderr", "") for r in (0, 1))
            code = max(int(c) for c in codes)
            results[path] = subprocess.CompletedProcess(run.args, code, stdout, stderr)
        return results


def script_output(result: "subprocess.CompletedProcess[str]") -> str:
    """A script's stdout as <name>.out stores it: trailing spaces dropped, one newline per line."""
    return "".join(line.rstrip() + "\n" for line in result.stdout.splitlines())


def load_all() -> list[Snippet]:
    return [Snippet.load(path) for path in snippet_paths()]


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
            f"has no output recorded for it: on torch {version}, run `python -m tools.refresh_outputs "
            "--release` (`RECORD=1 make matrix` does) and review the diff")


def release_problems(path: Path, version: str, namespace: dict) -> str | None:
    """Run snippets/<name>.md on this torch (`version`, excluded by its gate) and compare it with
    what snippets/releases/<name>.md recorded for this release; None if it printed exactly that.

    The recorded transcript must hold the snippet's own code: it ends early only after an example
    that raised, and that exception (type and message) is then the output compared."""
    from tools import releases

    snippet = Snippet.load(path)
    recorded_at = f"snippets/releases/{snippet.name}.md"
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
    from tools import releases

    recorded_at = f"snippets/releases/{path.stem}.md"
    section = releases.for_release(path.stem, version)
    rel = path.relative_to(ROOT).as_posix()
    if section is None:
        return _not_recorded(rel, recorded_at, version)
    got = releases.script_body(script_output(result), result.returncode, result.stderr)
    if got == section.body:
        return None
    import difflib

    diff = "".join(difflib.unified_diff(section.body.splitlines(keepends=True), got.splitlines(keepends=True),
                                        f"{recorded_at} (torch {', '.join(section.releases)})",
                                        f"printed on torch {version}"))
    return f"{rel} printed something other than {recorded_at} records:\n{diff}\n{result.stderr[-3000:]}"
