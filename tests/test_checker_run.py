"""The reader's checker (tools/reader/checker.py writes check_guide.py), run as a reader runs it.

The full checker run takes minutes (`make check-guide`). Here it runs as a reader runs it,
`python check_guide.py`, twice, in the background: on two cheap pages (one passes, one whose
libraries are hidden is not run), and on a probe page of its own (a crash, a changed script line,
a folder named like a library beside it, temporary files left behind) in a TMPDIR of its own.
A copy with one expected line changed runs its main() in this process, where torch is imported
already: it must fail, naming the page's address and the example and showing the line.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.checker_helpers import BROKEN_LINE, BROKEN_PAGE, CHANGED_LINE, _load, line_of, main_here
from tests.pages import Source
from tests.checker_helpers import changed, generated, module  # noqa: F401  (fixtures)
from tools.reader import checker
from tools.snippets import ROOT, Snippet, find, rel

PASSING_PAGE = "register-hook"     # a few snippets, under a second of examples
MISSING_PAGE = "captum"            # every snippet needs a library hidden below: nothing runs


# Both runs start right after collection (conftest.py calls start_runs), in a folder of their own,
# and run while the other tests do: waiting for them in the first test cost this process 7 s.
_RUNS: dict = {}


def start_runs() -> None:
    if _RUNS:
        return
    folder = Path(tempfile.mkdtemp(prefix="guide-checker-runs-"))
    generated = checker.write(folder / "check_guide.py")
    _RUNS["folder"] = folder
    _RUNS["reader"] = _start_reader(_load(generated), generated, folder / "reader")
    _RUNS["probe"] = _start_probe(generated, folder / "probe")


def stop_runs() -> None:
    """conftest.py, at the end of the session: nothing left running, nothing left behind."""
    for name in ("reader", "probe"):
        process = _RUNS.get(name, (None, None))[1]
        if process is not None and process.poll() is None:
            process.kill()
            process.communicate()
    if "folder" in _RUNS:
        shutil.rmtree(_RUNS["folder"], ignore_errors=True)


def _start_reader(module, generated: Path, folder: Path):
    """The reader's run: (the libraries hidden from it, its process)."""
    folder.mkdir()
    # A reader without captum and the model libraries: importing them fails in the checker's
    # process. numpy stays: torch itself uses it where it is installed.
    hidden = sorted({lib for name in next(p for p in module.PAGES if p["name"] == MISSING_PAGE)["snippets"]
                     for lib in module.SNIPPETS[name]["needs"]} - {"numpy"})
    (folder / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{lib!r}] = None\n" for lib in hidden), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(folder)}  # only the shim: nothing of the repository
    process = subprocess.Popen(
        [sys.executable, str(generated), "--page", PASSING_PAGE, "--page", MISSING_PAGE],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return hidden, process


@pytest.fixture(scope="session")
def reader():
    start_runs()  # a no-op where conftest.py started it
    hidden, process = _RUNS["reader"]
    assert hidden, f"{MISSING_PAGE} imports no optional library: pick another page"
    return hidden, process


PROBE_URL = "https://example.org/guide/"
PROBE_SECTION = {"anchor": "probe-section", "title": "A probe"}
# An optional library the reader lacks, whose name a folder beside check_guide.py has, as the
# site's page folders transformers/ and captum/ do: Python would import the folder (an empty
# namespace package) and the checker would run what needs the library instead of "not run".
PROBE_LIBRARY = "probe_library"
PROBE_SNIPPETS = {
    # no folder stands for the library; a temporary folder left behind, in the checker's folder
    "probe_libraries": {"kind": "doctest", "needs": [], "text": f"""```pycon title="probe_libraries"
>>> import importlib.util
>>> import tempfile
>>> kept = tempfile.mkdtemp(prefix="probe-doctest-")
>>> print(importlib.util.find_spec("{PROBE_LIBRARY}"))
None
```
"""},
    "probe_missing": {"kind": "doctest", "needs": [PROBE_LIBRARY], "text": f"""```pycon title="probe_missing"
>>> import {PROBE_LIBRARY}
>>> print({PROBE_LIBRARY}.VERSION)
1.0
```
"""},
    # a crash in a function of an earlier example: the reader's frames; the examples after it,
    # which would fail for want of `value`, are not run
    "probe_crash": {"kind": "doctest", "needs": [], "text": """```pycon title="probe_crash"
>>> def inner():
...     return 1 / 0
>>> value = inner()
>>> print(value)
1.0
>>> print("more")
more
```
"""},
    # one changed line: a unified diff
    "probe_script": {"kind": "script", "needs": [], "source": (
        "import tempfile\ntempfile.mkdtemp(prefix='probe-script-')\nprint('one')\nprint('two')\nprint('three')\n"),
        "output": "one\nTWO\nthree\n"},
    # the --run-distributed process: no folder stands for the library; temporary folders go to
    # the checker's folder
    "probe_distributed": {"kind": "distributed", "needs": [], "source": f"""import importlib.util
import socket
import tempfile


def worker(rank, world_size, port):
    tempfile.mkdtemp(prefix="probe-distributed-")
    print(rank, importlib.util.find_spec("{PROBE_LIBRARY}"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
""", "output": "0 None\n1 None\n"},
}


def _start_probe(generated: Path, folder: Path):
    """check_guide.py with a probe page of its own instead of the guide's, run as a reader runs
    it from a downloaded site (page folders named transformers/ and captum/ beside it), with a
    TMPDIR of its own: (that TMPDIR, its process)."""
    site_copy, temporary = folder / "site", folder / "tmp"
    for path in (site_copy / "transformers", site_copy / "captum", site_copy / PROBE_LIBRARY, temporary):
        path.mkdir(parents=True)
    page = {"name": "probe", "title": "Probe", "url": "probe/", "snippets": list(PROBE_SNIPPETS),
            "sections": dict.fromkeys(PROBE_SNIPPETS, PROBE_SECTION)}
    data = (f"\nSITE_URL = {PROBE_URL!r}\nGATES = {{}}\nPAGES = [{page!r}]\nSNIPPETS = {PROBE_SNIPPETS!r}\n"
            f"LIBRARIES[{PROBE_LIBRARY!r}] = 'probe-library==1.0'\n")
    text = generated.read_text(encoding="utf-8")
    (site_copy / "check_guide.py").write_text(text.replace(checker.DATA_END, checker.DATA_END + data, 1),
                                              encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(temporary), "TEMP": str(temporary), "TMP": str(temporary)}
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen([sys.executable, "check_guide.py", "--diff"], cwd=site_copy, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return temporary, process


@pytest.fixture(scope="session")
def probe():
    """The probe's run: (code, stdout, stderr, its TMPDIR), waited for on first use."""
    start_runs()
    temporary, process = _RUNS["probe"]
    results: list = []

    def wait():
        if not results:
            stdout, stderr = process.communicate(timeout=300)
            results.append((process.returncode, stdout, stderr, temporary))
        return results[0]

    return wait


def test_a_page_passes_and_a_page_without_its_libraries_is_not_run(reader):
    hidden, process = reader
    stdout, stderr = process.communicate(timeout=300)
    code = process.returncode
    assert code == 0, f"check_guide.py exited with {code}:\n{stdout}\n{stderr}"
    count = len({Path(i).stem for i in Source(ROOT / "docs" / "techniques" / f"{PASSING_PAGE}.md").includes()
                 if i.endswith((".md", ".py"))})  # the page's own includes: no count pinned here
    assert re.match(rf"{PASSING_PAGE} +passed +{count} snippets?", line_of(stdout, PASSING_PAGE)), stdout
    missing = line_of(stdout, MISSING_PAGE)
    assert re.match(rf"{MISSING_PAGE} +not run +needs ", missing), stdout
    for library in hidden:
        assert re.search(rf"needs [\w, ]*\b{library}\b", missing), f"the not-run line does not name {library}:\n{stdout}"
        assert f'"{library}==' in missing, f"the not-run line does not give {library}'s pinned version:\n{stdout}"
    summary = stdout.rsplit("\n\n", 1)[-1]
    assert "torch 2." in summary and f"Python {platform.python_version()}" in summary, summary
    assert platform.platform() in summary, summary
    assert "2 pages: 1 passed, 0 differ, 1 not run" in summary and "Not run, for a missing library" in summary, summary
    assert not stderr.strip(), f"check_guide.py let the examples' stderr through:\n{stderr}"


def _probe_diff(stdout: str, name: str) -> str:
    """The --diff section of snippet `name` of the probe run ("" if there is none)."""
    found = re.search(rf"^=== probe: {name} \(.*?(?=^=== |\n\ntorch )", stdout, re.M | re.S)
    return found.group(0) if found else ""


def test_a_folder_named_like_a_library_beside_the_checker_does_not_shadow_it(probe):
    """A missing library with a folder of its name beside check_guide.py is not run, and the
    folder is no library in this process nor in the distributed workers."""
    code, stdout, stderr, _ = probe()
    assert re.match(r"probe +differs +2 of 5 snippets differ: probe_crash, probe_script \| "
                    rf"1 not run: needs {PROBE_LIBRARY} ", line_of(stdout, "probe")), f"{stdout}\n{stderr}"
    for name in ("probe_libraries", "probe_distributed"):
        assert not _probe_diff(stdout, name), f"{name}: the empty folder stood for the library:\n{stdout}"


def test_a_run_leaves_nothing_in_the_temporary_folder(probe):
    """The examples' temporary folders (in this process, a script's, the distributed workers')
    go to the checker's own folder, which goes at the end."""
    code, stdout, stderr, temporary = probe()
    assert "probe_libraries" not in line_of(stdout, "probe"), stdout  # it made its folder
    left = sorted(path.name for path in temporary.iterdir())
    assert not left, f"check_guide.py left {left} in the TMPDIR it was given:\n{stdout}\n{stderr}"


def test_the_diff_shows_where_on_the_site_the_readers_frames_and_a_unified_diff(probe):
    code, stdout, stderr, _ = probe()
    assert code == 1, f"check_guide.py returned {code}:\n{stdout}\n{stderr}"
    where = f'on the page: {PROBE_URL}probe/#{PROBE_SECTION["anchor"]} (section "{PROBE_SECTION["title"]}")'
    script = _probe_diff(stdout, "probe_script")
    assert where in script, stdout
    assert re.search(r"^--- the page's output\n\+\+\+ printed on torch 2\.\d+\n@@ .* @@\n one\n-TWO\n\+two\n three$",
                     script, re.M), f"not a unified diff:\n{script}"
    crash = _probe_diff(stdout, "probe_crash")
    assert where in crash and "example 2 of 4:\n    >>> value = inner()\nraised:\n" in crash, stdout
    assert 'File "probe_crash, example 1", line 2, in inner\n        return 1 / 0' in crash, crash
    assert "ZeroDivisionError: division by zero" in crash, crash
    assert "check_guide" not in crash and "run_as_script" not in crash, f"the checker's own frames:\n{crash}"
    assert "(not run: the 2 examples after it, which build on it)" in crash and "NameError" not in crash, crash


def _section_of(page: Path, name: str) -> str:
    """The anchor of the last heading above the page's include of snippet `name`."""
    text = page.read_text(encoding="utf-8")
    above = text[: text.index(f'--8<-- "{rel(find(name)).removeprefix("snippets/")}"')]
    return re.findall(r"^#+ .*\{ #([\w-]+) \}$", above, re.MULTILINE)[-1]


def test_a_changed_output_line_fails_and_shows_the_line_and_where_it_is(changed, capsys):
    code, stdout = main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} although an expected line was changed:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +differs +1 of \d+ snippets? differ: non_leaf_grad_warning",
                    line_of(stdout, BROKEN_PAGE)), stdout
    examples = Snippet.load(find("non_leaf_grad_warning")).examples()
    number = next(i for i, e in enumerate(examples, 1) if "leaves:" in e.source)
    page = next(p for p in changed.PAGES if p["name"] == BROKEN_PAGE)
    url = changed.SITE_URL + page["url"] + "#" + _section_of(ROOT / "docs" / "index.md", "non_leaf_grad_warning")
    assert url.startswith("http") and f"on the page: {url} (section " in stdout, stdout
    assert f"example {number} of {len(examples)}:\n    >>> print(\"leaves:\"" in stdout, stdout
    assert f"Expected:\n    {CHANGED_LINE}\nGot:\n    {BROKEN_LINE}" in stdout, stdout
    left = len(examples) - number
    assert f"(not run: the {left} examples after it, which build on it)" in stdout, stdout
    assert "snippets/" not in stdout, f"the reader has no snippets/ folder:\n{stdout}"
    assert "1 snippet printed something other than the guide shows." in stdout, stdout
