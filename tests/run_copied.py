"""Run what the copy buttons put on the clipboard, as a reader runs it, and report what it printed.

    python -m tests.run_copied results.jsonl < jobs.jsonl

Input, one JSON object a line, as the browser finds them: {"language": "pycon" | "cell" |
"python", "text": ...}. Each runs as it arrives (so the runs overlap the browsing):
- pycon, cell (a notebook cell): as a script in a fresh module of this one process (torch is imported once), with
  what an earlier copy or import changed restored first, as in a new process (tools/examples/fresh.py);
- pycon equal to a snippet's code (what `Snippet.script()` says the copy button gives): not run
  again: tests/test_examples.py runs that snippet's examples as the copied script, in order in a
  fresh module, and rejects a value the >>> prompt would echo; the browser test reads those
  examples' outcomes; the result names the file: {"snippet": "snippets/..."} (notebook cells and the
  pages' own blocks still run here);
- python equal to a script snippet (snippets/<folder>/<name>.py, byte for byte but for trailing
  blank lines): not run again: tests/test_scripts.py runs that file as a reader runs its copy
  (`python <name>.py` alone in an empty folder, tools/examples/scripts.py), and the browser test
  reads that run; the result names the file: {"script": "snippets/..."};
- other python (the script snippets, which start processes of their own): written to a file in an empty
  folder and run there with `python <file>`, as tools.snippets.run_script runs the snippets; the
  two-process scripts (the standard launch block, tests/test_scripts.py checks it byte for byte)
  wait for the end and run together as the tests run them, forked from one process that imported
  torch once (tools/examples/distributed_runner.py), a pair of processes per set of libraries
  installed apart: a copied script run on its own imports torch in each of its three processes.

Output, one line per job in the same order, to a file, written once every job has run (what the code prints goes to this
process's stdout): {"ok": bool, "stdout": ..., "error": ...}.
"""

from __future__ import annotations

import json
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

from tools.examples import offline
from tools.examples.evaluate import module_globals, run_as_script
from tools.examples.fresh import as_in_a_new_process
from tools.examples.scripts import apart_libraries, run_distributed, run_script, script_output
from tools.snippets import ROOT, Snippet, is_distributed, script_paths, snippet_paths


def run_pycon(text: str, index: int) -> dict:
    as_in_a_new_process()
    try:
        printed = run_as_script(text, module_globals(f"copied_{index}"), f"<copied {index}>")
    except BaseException:  # a failing copy is a result, not a crash of the runner
        return {"ok": False, "stdout": "", "error": traceback.format_exc(limit=-3)}
    return {"ok": True, "stdout": printed, "error": ""}


def as_its_examples_ran(snippet: str, text: str, index: int) -> dict:
    """In the test process (tests/test_browser.py): what a copy equal to a snippet's code prints,
    from that snippet's examples, each of which ran as part of the copied script (in order, in a
    fresh module, a value the >>> prompt would echo rejected: tools/examples/evaluate.py's
    ScriptEvaluator) and printed its expected output. Where they did not all run and pass in this
    session (the browser tests run alone), the copy runs here."""
    from tests.test_examples import examples_passed

    if examples_passed(snippet):
        return {"ok": True, "stdout": Snippet.load(ROOT / snippet).expected_output(), "error": ""}
    # Run once per snippet: the Chinese page's copy is the English page's, character for character
    # (test_chinese_page_gives_the_same_code_as_the_english_one), and a second run in this process
    # would meet what the first left behind where a new process starts clean (Dynamo's compile
    # counters, nested tensors' j1 becoming j2): 6 of the 7 failures of a browser-only run.
    if (snippet, text) not in _RAN_HERE:
        with warnings.catch_warnings():  # a reader's process has Python's filters, not pytest's "error"
            warnings.resetwarnings()
            for action, category, module in reversed(READER_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module)
            _RAN_HERE[snippet, text] = run_pycon(text, index)
    return _RAN_HERE[snippet, text]


_RAN_HERE: dict[tuple[str, str], dict] = {}


# Python's own warning filters (`python -c "import warnings; print(warnings.filters)"`, 3.11 to
# 3.13), which this process (`python -m tests.run_copied`) has too. Run in the test process with
# pytest's filters, the first copy to import torch._decomp.decompositions_for_jvp raised torch's
# FutureWarning that a reader only sees printed (18 browser tests failed when run alone).
READER_WARNING_FILTERS = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
]


def run_python(text: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="guide-copied-") as folder:
        path = Path(folder) / "copied.py"
        path.write_text(text, encoding="utf-8")
        result = run_script(path)
    return {"ok": result.returncode == 0, "stdout": script_output(result), "error": result.stderr[-3000:]}


def run_distributed_copies(texts: dict[int, str], folder: Path) -> dict[int, dict]:
    """The copied two-process scripts, by job index: each written to its own file, then run in
    one shared run per set of libraries installed apart, as tests/test_scripts.py groups them."""
    paths = {}
    for index, text in texts.items():
        path = folder / f"copied_{index}.py"
        path.write_text(text, encoding="utf-8")
        paths[index] = path
    groups: dict[tuple, list[Path]] = {}
    for path in paths.values():
        groups.setdefault(tuple(apart_libraries(path)), []).append(path)
    done = {}
    for group in groups.values():
        done.update(run_distributed(group, cwd=folder))
    return {index: {"ok": done[path].returncode == 0, "stdout": script_output(done[path]),
                    "error": done[path].stderr[-3000:]} for index, path in paths.items()}


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


_SNIPPETS: dict[str, str] = {}


def same_snippet(text: str) -> str | None:
    """The snippet whose code (without prompts or output) is this text, as a path from the root."""
    if not _SNIPPETS:
        for path in snippet_paths():
            snippet = Snippet.load(path)
            if len(snippet.fences()) == 1:
                _SNIPPETS.setdefault(_lines(snippet.script()), snippet.rel)
    return _SNIPPETS.get(_lines(text))


def same_script(text: str) -> str | None:
    """The script snippet whose file is this text (trailing blank lines aside), as a path from the root."""
    for path in script_paths():
        if path.read_text(encoding="utf-8").rstrip() == text.rstrip():
            return path.relative_to(ROOT).as_posix()
    return None


def main() -> None:
    offline.install()
    found: dict[int, dict] = {}
    distributed: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="guide-copied-") as folder:
        for index, line in enumerate(sys.stdin):
            job = json.loads(line)
            snippet = same_snippet(job["text"]) if job["language"] == "pycon" else None
            if snippet is not None:
                found[index] = {"snippet": snippet}
                continue
            if job["language"] != "python":
                found[index] = run_pycon(job["text"], index)
                continue
            script = same_script(job["text"])
            if script is not None:
                found[index] = {"script": script}
                continue
            path = Path(folder) / "probe.py"
            path.write_text(job["text"], encoding="utf-8")
            if is_distributed(path):
                distributed[index] = job["text"]
            else:
                found[index] = run_python(job["text"])
        found.update(run_distributed_copies(distributed, Path(folder)))
    with open(sys.argv[1], "w", encoding="utf-8") as results:
        for index in sorted(found):
            results.write(json.dumps(found[index]) + "\n")


if __name__ == "__main__":
    main()
