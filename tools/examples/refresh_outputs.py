"""Rewrite the expected outputs of snippets from a real run.

Doctest snippets (snippets/<folder>/<name>.md) get their output lines rewritten in place; script
snippets (<name>.py) get <name>.out, beside them, rewritten from the script's stdout.

    python -m tools.examples.refresh_outputs            # every snippet
    python -m tools.examples.refresh_outputs retain_grad register_hook_save_grad
    python -m tools.examples.refresh_outputs --check    # report stale outputs, write nothing (exit 1)
    python -m tools.examples.refresh_outputs --release  # on another torch: record what the gated snippets
                                               # print there (<folder>/releases/, tools/snippets/releases.py)
    python -m tools.examples.refresh_outputs --needs retain_grad    # the make targets that install what
                                               # the snippets import (`make outputs` installs those only)

Each snippet runs as its copied script runs, in a fresh module, exactly as the tests run it,
and every expected output becomes what the run printed, with memory addresses and
torch-internal paths written as "...". The file is a function of the run alone; only output lines change, so an upgrade
is a diff to review.
"""

from __future__ import annotations

import argparse
import contextlib
import doctest
import faulthandler
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

from tools.examples import fresh, offline
from tools.examples.evaluate import echo_message, exception_line, module_globals, run_as_script
from tools.examples.scripts import run_distributed, run_script, script_output
from tools.snippets import (
    ROOT, SNIPPETS, Snippet, is_distributed, load_all, rel, releases, script_paths, torch_release, version_gates,
)

# Values that differ from machine to machine or run to run, written in the ELLIPSIS form that the
# rules in tests/test_snippet_rules.py allow.
NORMALIZE = [
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x..."),
    # an object's id() printed in decimal (torch 2.9's "4*s11 (139977925905936)is not tracked
    # with proxy"): an address too
    (re.compile(r"\(\d{12,}\)"), "(...)"),
    # one line, even where the path was wrapped: a "..." that starts a line can swallow the line above
    (re.compile(r"\(Triggered internally at\s+[^)\s]+\)"), "(Triggered internally at...)"),
    # where the release's torch is installed: a path of the machine that recorded it
    (re.compile(r"(?<![\w.])/[^\s'\"]*/site-packages/"), "..."),
    # the name a run gives the example's code, in a traceback that Dynamo prints ("from user
    # code: File ..., line 4"): the tests, the recorder and check_guide.py each name it otherwise
    (re.compile(r'File "[^"\n]+", line'), 'File "...", line'),
]


# A script killed at its time limit (tools/examples/scripts.py, distributed_runner.py): never
# recorded as what a release prints.
TIMED_OUT = re.compile(r"\bdid not finish in \d+ s\b")


class SnippetRaised(Exception):
    pass


def _as_want(got: str, indent: int) -> list[str]:
    for pattern, replacement in NORMALIZE:
        got = pattern.sub(replacement, got)
    lines = [line.rstrip() for line in got.splitlines()]
    return [" " * indent + (line or "<BLANKLINE>") + "\n" for line in lines]


def _run_examples(snippet: Snippet, on_release: bool) -> tuple[list[doctest.Example], dict, str | None]:
    """Run the snippet's examples in order: their outputs, by id. On another release an example
    that raises ends the run: the exception is its output, and the examples after it are left out."""
    examples = snippet.examples()
    namespace = module_globals(f"snippet_{snippet.name}")
    # as in the tests: forget what earlier snippets compiled, logged once, or set in a library's
    # logging (a matrix pass records hundreds of snippets in one process)
    fresh.as_in_a_new_process()
    got: dict[int, str] = {}
    for index, example in enumerate(examples):
        where = f"{snippet.rel}, line {snippet.text[:snippet.fence.start('body')].count(chr(10)) + example.lineno + 1}"
        echoes: list = []
        try:
            # "<file>:<line>", as the tests name it: not a file Dynamo can open (from torch 2.15 it
            # tokenizes the code's file for its logs, and a Markdown file raises IndentationError there)
            got[id(example)] = run_as_script(example.source, namespace, where.replace(", line ", ":"), echoes)
        except Exception as err:
            if on_release:
                return examples[: index + 1], got, exception_line(err)
            raise SnippetRaised(
                f"{where}: {type(err).__name__}: {err}\n"
                "A snippet must run as a copied script: catch an expected error and print it."
            ) from err
        if echoes:
            raise SnippetRaised(echo_message(example.source, echoes, where))
    return examples, got, None


def refresh(snippet: Snippet, on_release: bool = False) -> tuple[str, int]:
    """Return the snippet's text with fresh outputs, and how many examples' outputs changed. On
    another release (`on_release`), the text is the transcript tools.snippets.releases records: the fence's
    body only, ending with the example that raised, if one did."""
    examples, got, raised = _run_examples(snippet, on_release)
    fence = snippet.fence
    body = fence["body"].splitlines(keepends=True)
    if raised is not None:  # keep the examples that ran; the last one shows its exception
        last = examples[-1]
        start = last.lineno + last.source.count("\n")
        exception = ["Traceback (most recent call last):\n", "  ...\n", *raised.splitlines(keepends=True)]
        body = body[:start] + _as_want("".join(exception), last.indent)
        examples = examples[:-1]
    changed = 0
    for example in reversed(examples):
        start = example.lineno + example.source.count("\n")
        end = start + example.want.count("\n")
        fresh = _as_want(got[id(example)], example.indent)
        if body[start:end] != fresh:
            body[start:end] = fresh
            changed += 1
    if on_release:
        return "".join(body), changed
    text = snippet.text[: fence.start("body")] + "".join(body) + snippet.text[fence.end("body") :]
    return text, changed


# What torch's C++ side logs straight to the process's stderr on a machine without a GPU, each time
# a snippet profiles: kineto's "USDT: ... profiler_start" lines and "gpuGetDeviceCount failed".
# They say nothing about the snippet; the outputs never contain them (stderr is not an output).
NATIVE_LOG = re.compile(r"^(?:USDT|STAGE|INFO|WARNING|ERROR):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \w+\.cpp:\d+\] ")


@contextlib.contextmanager
def quiet_native_logs():
    """Run the body with file descriptor 2 captured; then write back all but torch's native log
    lines (Python's warnings and tracebacks stay)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().decode(errors="replace").splitlines(keepends=True)
                    if not NATIVE_LOG.match(line)]
            sys.stderr.write("".join(kept))


def _file(path: Path) -> str:
    """A snippet's path under snippets/, as its page includes it."""
    return path.relative_to(SNIPPETS).as_posix()


def pinned_torch() -> str:
    return re.search(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.MULTILINE)[1]


def record_releases(snippets: list[Snippet], scripts: list, check: bool, every: bool = False) -> int:
    """On a torch other than the pin: record what each snippet gated off this release prints here
    (<folder>/releases/<name>.md); forget this release for the others. Returns how many changed.

    With `every` (RECORD=all in the matrix: a release's first run, or examples new to the matrix),
    every snippet runs, and one that prints something other than its page here is recorded too,
    and its gate in snippets/versions.toml widened to this release (a new gate's `why` says to
    write one): the review then reads each recorded difference and writes the page's note. A
    snippet whose gate says its output varies from run to run is left to the maintainer."""
    import torch

    version = torch.__version__.split("+")[0]
    gates = version_gates()
    here = torch_release()
    changed = 0
    for snippet in snippets:
        gate = gates.get(snippet.name)
        # a release where the gate says the page's output holds with a warning is run too: where
        # the output differs there after all, it is recorded and the release named in differs_on
        if every and not check and (gate is None or gate.warns_on(here) or not (gate.excludes(here) or gate.varies_on)):
            changed += _record_if_different(snippet, None, version)
            continue
        if gate is None or not gate.excludes(here) or gate.warns_on(here):
            done = False if check else releases.forget(snippet.name, _file(snippet.path), version)
        else:
            try:
                with warnings.catch_warnings():  # as tools.examples.evaluate.release_problems runs it
                    warnings.simplefilter("ignore")
                    with quiet_native_logs():
                        body, _ = refresh(snippet, on_release=True)
            except SnippetRaised as err:  # not recorded: the tests on this release fail with it
                print(f"not recorded: {err}")
                continue
            if body == snippet.fence["body"]:
                print(f"same as the page: {snippet.rel} prints the page's output on torch {version}: "
                      f"its gate in snippets/versions.toml is not needed here")
            stale = (releases.for_release(snippet.name, version) or releases.Section([], "", "")).body != body
            done = stale if check else releases.record(snippet.name, _file(snippet.path), version, "pycon", body)
        changed += _report(done, check, snippet.name, version)
    for script in scripts:
        gate = gates.get(script.stem)
        if every and not check and (gate is None or not (gate.excludes(here) or gate.varies_on)):
            changed += _record_if_different(None, script, version)
            continue
        if gate is None or not gate.excludes(here):
            done = False if check else releases.forget(script.stem, _file(script), version)
        else:
            result = (run_distributed([script])[script] if is_distributed(script) else run_script(script))
            body = releases.script_body(script_output(result), result.returncode, result.stderr)
            if TIMED_OUT.search(body):
                print(f"not recorded: {rel(script)} did not finish on torch {version}")
                continue
            stale = (releases.for_release(script.stem, version) or releases.Section([], "", "")).body != body
            done = stale if check else releases.record(script.stem, _file(script), version, "text", body)
        changed += _report(done, check, script.stem, version)
    return changed


def _record_if_different(snippet: Snippet | None, script: Path | None, version: str) -> int:
    """RECORD=all: run one snippet on this release; where it prints something other than its page,
    record it and widen its gate to this release (tools/examples/upgrade.py, widen_gate)."""
    from tools.examples.upgrade import widen_gate

    if snippet is not None:
        name, path, kind = snippet.name, snippet.path, "pycon"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with quiet_native_logs():
                    body, _ = refresh(snippet, on_release=True)
        except SnippetRaised as err:
            print(f"not recorded: {err}")
            return 0
        same = body == snippet.fence["body"]
    else:
        name, path, kind = script.stem, script, "text"
        result = run_distributed([script])[script] if is_distributed(script) else run_script(script)
        body = releases.script_body(script_output(result), result.returncode, result.stderr)
        if TIMED_OUT.search(body):  # a loaded machine, not the release: the tests fail with it instead
            print(f"not recorded: {rel(path)} did not finish on torch {version}")
            return 0
        same = result.returncode == 0 and body == script.with_suffix(".out").read_text(encoding="utf-8")
    if same:
        return int(releases.forget(name, _file(path), version))
    releases.record(name, _file(path), version, kind, body)
    widen_gate(name, version)
    print(f"differs: {rel(path)} prints something else on torch {version}: recorded, gate widened")
    return 1


# What `make outputs NAME=<snippet>` (and `make test-docs NAME=...`) installs: `install` (torch and
# the test tools), and each optional layer only for a snippet that imports a library it pins.
# Layer -> its make target. A pin's import name is its distribution's, as in check_guide.py's
# LIBRARIES (tools/reader/checker.py): tensorflow-cpu is tensorflow, torch-geometric torch_geometric.
LAYERS = {
    "requirements-frameworks.txt": "install-frameworks",
    "requirements-models.txt": "install-models",
    "requirements-deepspeed.txt": "install-deepspeed",
}
IMPORT = re.compile(r"^(?:>>> |\.\.\. )?[ \t]*(?:import|from)[ \t]+(\w+)", re.MULTILINE)
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==", re.MULTILINE)


def layer_libraries(requirements: str) -> set[str]:
    """The import names of the libraries a requirement file pins itself (not its `-r` files)."""
    text = (ROOT / requirements).read_text(encoding="utf-8")
    return {re.sub(r"-cpu$", "", dist.lower()).replace("-", "_") for dist in PIN.findall(text)}


def install_targets(paths: list[Path]) -> list[str]:
    """The make targets that install what these snippet files import, `install` first."""
    imported = {name for path in paths for name in IMPORT.findall(path.read_text(encoding="utf-8"))}
    return ["install", *(target for layer, target in LAYERS.items() if layer_libraries(layer) & imported)]


def matching(words: list[str], paths: list[Path]) -> list[Path] | None:
    """The snippet files `pytest -k` selects the examples of, for `make test-docs NAME=...`: those
    whose path under snippets/ contains a word (a snippet's name, a page's: its folder), case
    aside. None (all of them) where a word matches none: what -k selects then is not known here."""
    found = []
    for word in words:
        hits = [path for path in paths if word.lower() in _file(path).lower()]
        if not hits:
            return None
        found += hits
    return found


def _report(done: bool, check: bool, name: str, version: str) -> int:
    if done:
        print(f"{'stale' if check else 'rewrote'}: {rel(releases.path(name))} (torch {version})")
    return int(done)


def main(argv: list[str] | None = None) -> int:
    # A crash inside torch names the snippet that was running (its traceback), on the stderr this
    # process started with: quiet_native_logs points fd 2 at a temporary file while a snippet runs.
    faulthandler.enable(file=os.fdopen(os.dup(2), "w"))  # faulthandler keeps the file open
    offline.install()  # as in the tests: a download fails the refresh instead of being recorded
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="snippet names (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--release", action="store_true",
                        help="on a torch other than the pin: record what the gated snippets print "
                             "on it (<folder>/releases/<name>.md)")
    parser.add_argument("--every", action="store_true",
                        help="with --release: run every snippet, record each that differs here and "
                             "widen its gate (RECORD=all make matrix)")
    parser.add_argument("--needs", action="store_true",
                        help="print the make targets that install what the snippets import "
                             "(`install`, and each optional layer one of them needs); run nothing")
    parser.add_argument("--matching", action="store_true",
                        help="with --needs: a name stands for the snippets whose path under "
                             "snippets/ contains it, as `make test-docs NAME=...` selects them")
    args = parser.parse_args(argv)
    if args.needs:
        return _print_needs(parser, args.names, args.matching)
    import torch

    installed, pinned = torch.__version__.split("+")[0], pinned_torch()
    if args.release == (installed == pinned):
        parser.error(f"torch {installed} is installed and requirements.txt pins {pinned}: "
                     + ("--release records another release's outputs; run it there (RECORD=1 make matrix)"
                        if args.release else
                        "the pages show the pin's outputs; on this release use --release"))

    snippets = load_all()
    scripts = script_paths()
    if args.names:
        known = {snippet.name: snippet for snippet in snippets}
        known_scripts = {path.stem: path for path in scripts}
        missing = sorted(set(args.names) - set(known) - set(known_scripts))
        if missing:
            parser.error(f"no such snippet under {SNIPPETS.name}/: {', '.join(missing)}")
        snippets = [known[name] for name in args.names if name in known]
        scripts = [known_scripts[name] for name in args.names if name in known_scripts]

    if args.release:
        changed = record_releases(snippets, scripts, args.check, args.every)
        print(f"{len(snippets) + len(scripts)} snippets on torch {installed}: {changed} release outputs changed")
        return 1 if args.check and changed else 0
    changed = 0
    for snippet in snippets:
        with quiet_native_logs():
            text, stale = refresh(snippet)
        if stale:
            changed += 1
            verb = "stale" if args.check else "rewrote"
            print(f"{verb}: {snippet.rel} ({stale} output{'s' * (stale != 1)})")
            if not args.check:
                snippet.path.write_text(text, encoding="utf-8")
    for script in scripts:
        result = run_script(script)
        if result.returncode != 0:
            raise SystemExit(f"{script.relative_to(SNIPPETS.parent)} failed:\n{result.stderr}")
        expected = script.with_suffix(".out")
        fresh = script_output(result)
        if not expected.exists() or expected.read_text(encoding="utf-8") != fresh:
            changed += 1
            verb = "stale" if args.check else "rewrote"
            print(f"{verb}: {expected.relative_to(SNIPPETS.parent)}")
            if not args.check:
                expected.write_text(fresh, encoding="utf-8")
    print(f"{len(snippets) + len(scripts)} snippets run, {changed} with changed outputs")
    return 1 if args.check and changed else 0


def _print_needs(parser: argparse.ArgumentParser, names: list[str], like: bool) -> int:
    paths = [snippet.path for snippet in load_all()] + script_paths()
    if like:
        selected = matching(names, paths) if names else paths
        print(" ".join(install_targets(paths if selected is None else selected)))
        return 0
    if names:
        known = {path.stem: path for path in paths}
        missing = sorted(set(names) - set(known))
        if missing:
            parser.error(f"no such snippet under {SNIPPETS.name}/: {', '.join(missing)}")
        paths = [known[name] for name in names]
    print(" ".join(install_targets(paths)))
    return 0


if __name__ == "__main__":
    status = main()
    # Leave without the interpreter's teardown: on some releases torch crashes there (SIGSEGV in
    # autograd's thread-local queue) after a snippet whose last backward raised, as a recording on
    # another release may end; everything is written and flushed by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
