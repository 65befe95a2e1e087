"""Run what the copy buttons put on the clipboard, as a reader runs it, and report what it printed.

    python -m tests.run_copied results.jsonl < jobs.jsonl

Input, one JSON object a line, as the browser finds them: {"language": "pycon" | "cell" |
"python", "text": ...}. Each runs as it arrives (so the runs overlap the browsing):
- pycon, cell (a notebook cell): as a script in a fresh module of this one process (torch is imported once), with
  Dynamo's caches reset first, as in a new process;
- python (the script snippets, which start processes of their own): written to a file in an empty
  folder and run there with `python <file>`, as tools.snippets.run_script runs the snippets.

Output, one line per job in the same order, to a file (what the code prints goes to this
process's stdout): {"ok": bool, "stdout": ..., "error": ...}.
"""

from __future__ import annotations

import json
import sys
import tempfile
import traceback
from pathlib import Path

from tools.examples import offline
from tools.examples.evaluate import module_globals, run_as_script
from tools.examples.scripts import run_script, script_output


def run_pycon(text: str, index: int) -> dict:
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()
    try:
        printed = run_as_script(text, module_globals(f"copied_{index}"), f"<copied {index}>")
    except BaseException:  # a failing copy is a result, not a crash of the runner
        return {"ok": False, "stdout": "", "error": traceback.format_exc(limit=-3)}
    return {"ok": True, "stdout": printed, "error": ""}


def run_python(text: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="guide-copied-") as folder:
        path = Path(folder) / "copied.py"
        path.write_text(text, encoding="utf-8")
        result = run_script(path)
    return {"ok": result.returncode == 0, "stdout": script_output(result), "error": result.stderr[-3000:]}


def main() -> None:
    offline.install()
    with open(sys.argv[1], "w", encoding="utf-8") as results:
        for index, line in enumerate(sys.stdin):
            job = json.loads(line)
            result = run_python(job["text"]) if job["language"] == "python" else run_pycon(job["text"], index)
            results.write(json.dumps(result) + "\n")
            results.flush()


if __name__ == "__main__":
    main()
