"""Rewrite the expected outputs of snippets from a real run.

Doctest snippets (snippets/<name>.md) get their output lines rewritten in place; script snippets
(snippets/<name>.py) get snippets/<name>.out rewritten from the script's stdout.

    python -m tools.refresh_outputs            # every snippet
    python -m tools.refresh_outputs retain_grad register_hook_save_grad
    python -m tools.refresh_outputs --check    # report stale outputs, write nothing (exit 1)

Each snippet runs as its own doctest, in a fresh namespace, exactly as the tests run it, and every
expected output becomes what the run printed, with memory addresses and torch-internal paths
written as "...". The file is a function of the run alone; only output lines change, so an upgrade
is a diff to review.
"""

from __future__ import annotations

import argparse
import doctest
import re
import sys

from tools.snippets import FLAGS, SNIPPETS, Snippet, load_all, run_script, script_output, script_paths

# Values that differ from machine to machine or run to run, written in the ELLIPSIS form that the
# rules in tests/test_snippet_rules.py allow.
NORMALIZE = [
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x..."),
    # one line, even where the path was wrapped: a "..." that starts a line can swallow the line above
    (re.compile(r"\(Triggered internally at\s+[^)\s]+\)"), "(Triggered internally at...)"),
]


class SnippetRaised(Exception):
    pass


class _Recorder(doctest.DocTestRunner):
    """Runs the examples like doctest and remembers what each one printed."""

    def __init__(self) -> None:
        super().__init__(optionflags=FLAGS, verbose=False)
        self.got: dict[int, str] = {}

    def report_success(self, out, test, example, got):
        self.got[id(example)] = got

    report_failure = report_success  # the old expectation does not matter: the run decides

    def report_unexpected_exception(self, out, test, example, exc_info):
        raise SnippetRaised(
            f"{test.name}, line {example.lineno + 1}: {exc_info[0].__name__}: {exc_info[1]}\n"
            "A snippet must run as a copied script: catch an expected error and print it."
        )


def _as_want(got: str, indent: int) -> list[str]:
    for pattern, replacement in NORMALIZE:
        got = pattern.sub(replacement, got)
    lines = [line.rstrip() for line in got.splitlines()]
    return [" " * indent + (line or "<BLANKLINE>") + "\n" for line in lines]


def refresh(snippet: Snippet) -> tuple[str, int]:
    """Return the snippet's text with fresh outputs, and how many examples' outputs changed."""
    examples = snippet.examples()
    test = doctest.DocTest(examples, {"__name__": "__main__"}, snippet.rel, str(snippet.path), 0, None)
    runner = _Recorder()
    runner.run(test, out=lambda _: None, clear_globs=True)

    fence = snippet.fence
    body = fence["body"].splitlines(keepends=True)
    changed = 0
    for example in reversed(examples):
        start = example.lineno + example.source.count("\n")
        end = start + example.want.count("\n")
        fresh = _as_want(runner.got[id(example)], example.indent)
        if body[start:end] != fresh:
            body[start:end] = fresh
            changed += 1
    text = snippet.text[: fence.start("body")] + "".join(body) + snippet.text[fence.end("body") :]
    return text, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="snippet names (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)

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

    changed = 0
    for snippet in snippets:
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


if __name__ == "__main__":
    sys.exit(main())
