"""Rewrite the expected outputs of snippets from a real run.

Doctest snippets (snippets/<name>.md) get their output lines rewritten in place; script snippets
(snippets/<name>.py) get snippets/<name>.out rewritten from the script's stdout.

    python -m tools.refresh_outputs            # every snippet
    python -m tools.refresh_outputs retain_grad register_hook_save_grad
    python -m tools.refresh_outputs --check    # report stale outputs, write nothing (exit 1)

Each snippet runs as its copied script runs, in a fresh module, exactly as the tests run it,
and every expected output becomes what the run printed, with memory addresses and
torch-internal paths written as "...". The file is a function of the run alone; only output lines change, so an upgrade
is a diff to review.
"""

from __future__ import annotations

import argparse
import re
import sys

from tools import offline
from tools.snippets import (
    SNIPPETS, Snippet, load_all, module_globals, run_as_script, run_script, script_output,
    script_paths,
)

# Values that differ from machine to machine or run to run, written in the ELLIPSIS form that the
# rules in tests/test_snippet_rules.py allow.
NORMALIZE = [
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x..."),
    # one line, even where the path was wrapped: a "..." that starts a line can swallow the line above
    (re.compile(r"\(Triggered internally at\s+[^)\s]+\)"), "(Triggered internally at...)"),
]


class SnippetRaised(Exception):
    pass


def _as_want(got: str, indent: int) -> list[str]:
    for pattern, replacement in NORMALIZE:
        got = pattern.sub(replacement, got)
    lines = [line.rstrip() for line in got.splitlines()]
    return [" " * indent + (line or "<BLANKLINE>") + "\n" for line in lines]


def refresh(snippet: Snippet) -> tuple[str, int]:
    """Return the snippet's text with fresh outputs, and how many examples' outputs changed."""
    examples = snippet.examples()
    namespace = module_globals(f"snippet_{snippet.name}")
    got = {}
    for example in examples:
        try:
            got[id(example)] = run_as_script(example.source, namespace, snippet.rel)
        except Exception as err:
            raise SnippetRaised(
                f"{snippet.rel}, line {example.lineno + 2}: {type(err).__name__}: {err}\n"
                "A snippet must run as a copied script: catch an expected error and print it."
            ) from err

    fence = snippet.fence
    body = fence["body"].splitlines(keepends=True)
    changed = 0
    for example in reversed(examples):
        start = example.lineno + example.source.count("\n")
        end = start + example.want.count("\n")
        fresh = _as_want(got[id(example)], example.indent)
        if body[start:end] != fresh:
            body[start:end] = fresh
            changed += 1
    text = snippet.text[: fence.start("body")] + "".join(body) + snippet.text[fence.end("body") :]
    return text, changed


def main(argv: list[str] | None = None) -> int:
    offline.install()  # as in the tests: a download fails the refresh instead of being recorded
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
