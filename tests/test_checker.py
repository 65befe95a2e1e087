"""The reader's checker (tools/reader/checker.py writes check_guide.py) and each page's downloads
(tools/site/downloads.py, read from the session's build).

The full checker run takes minutes (`make check-guide`). Here it runs as a reader runs it,
`python check_guide.py`, twice, in the background: on two cheap pages (one passes, one whose
libraries are hidden is not run), and on a probe page of its own (a crash, a changed script line,
a folder named like a library beside it, temporary files left behind) in a TMPDIR of its own.
A copy with one expected line changed runs its main() in this process, where torch is imported
already: it must fail, naming the page's address and the example and showing the line. On a
release a gate excludes (a gate made up for the test), only exactly the output recorded for that
release (snippets/releases/, here made up too) is "differs as the page says".
"""

from __future__ import annotations

import ast
import html
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin

import pytest

from tests.built_site import SITE_URL, builds, site  # noqa: F401  (the session's strict build)
from tests.pages import Source, pages, site_path
from tools.reader import checker
from tools.site import downloads
from tools.snippets import releases
from tools.snippets import FENCE, ROOT, SNIPPETS, Snippet

PASSING_PAGE = "register-hook"     # four snippets, under a second of examples
MISSING_PAGE = "captum"            # every snippet needs a library hidden below: nothing runs
BROKEN_PAGE = "index"              # one snippet; its copy gets one wrong expected line
BROKEN_LINE = "leaves: True True True"
CHANGED_LINE = "leaves: True True False"
PAGES = pages()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("check_guide_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines; main() runs only as __main__
    return module


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    return checker.write(tmp_path_factory.mktemp("checker") / "check_guide.py")


@pytest.fixture(scope="module")
def module(generated):
    return _load(generated)


@pytest.fixture(scope="module")
def reader(generated, module, tmp_path_factory):
    """The reader's run, started by the first test (it costs a torch import) and read later."""
    folder = tmp_path_factory.mktemp("reader")
    # A reader without captum and the model libraries: importing them fails in the checker's
    # process. numpy stays: torch itself uses it where it is installed.
    hidden = sorted({lib for name in next(p for p in module.PAGES if p["name"] == MISSING_PAGE)["snippets"]
                     for lib in module.SNIPPETS[name]["needs"]} - {"numpy"})
    assert hidden, f"{MISSING_PAGE} imports no optional library: pick another page"
    (folder / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{lib!r}] = None\n" for lib in hidden), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(folder)}  # only the shim: nothing of the repository
    process = subprocess.Popen(
        [sys.executable, str(generated), "--page", PASSING_PAGE, "--page", MISSING_PAGE],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield hidden, process
    if process.poll() is None:
        process.kill()
        process.communicate()


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


@pytest.fixture(scope="module")
def probe(generated, tmp_path_factory):
    """check_guide.py with a probe page of its own instead of the guide's, run as a reader runs
    it from a downloaded site (page folders named transformers/ and captum/ beside it), with a
    TMPDIR of its own: (code, stdout, stderr, that TMPDIR)."""
    folder = tmp_path_factory.mktemp("probe")
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
    results: list = []

    def wait():
        if not results:
            stdout, stderr = process.communicate(timeout=300)
            results.append((process.returncode, stdout, stderr, temporary))
        return results[0]

    yield wait
    if process.poll() is None:
        process.kill()
        process.communicate()


def _included(source: Path) -> list[str]:
    """The examples a page includes, found as tests/pages.py finds includes."""
    names = []
    for include in Source(source).includes():
        if "/" not in include and include.endswith((".md", ".py")) and Path(include).stem not in names:
            names.append(Path(include).stem)
    return names


# --- (a) what the checker carries ------------------------------------------------------------

def test_the_checker_carries_every_page_with_examples_in_nav_order(module, reader, probe):
    english = {p.path: _included(p.path) for p in PAGES if not p.is_zh}
    expected = [(source.name.split(".")[0], english[source]) for source in checker.nav_sources() if english[source]]
    carried = [(page["name"], page["snippets"]) for page in module.PAGES]
    assert carried == expected, "check_guide.py's pages or their snippets differ from the pages' includes"
    not_in_nav = [str(path.relative_to(ROOT)) for path, names in english.items()
                  if names and path not in checker.nav_sources()]
    assert not not_in_nav, f"pages with examples outside mkdocs.yml's nav: {not_in_nav}"


def test_the_checker_carries_each_example_byte_for_byte(module):
    names = {name for page in module.PAGES for name in page["snippets"]}
    for name in sorted(names):
        carried = module.SNIPPETS[name]
        if carried["kind"] == "doctest":
            assert carried["text"] == (SNIPPETS / f"{name}.md").read_text(encoding="utf-8"), (
                f"check_guide.py carries another text than snippets/{name}.md")
        else:
            assert carried["source"] == (SNIPPETS / f"{name}.py").read_text(encoding="utf-8"), (
                f"check_guide.py carries another source than snippets/{name}.py")
            assert carried["output"] == (SNIPPETS / f"{name}.out").read_text(encoding="utf-8"), (
                f"check_guide.py carries another output than snippets/{name}.out")
            distributed = "def worker(rank, world_size, port):" in carried["source"]
            assert (carried["kind"] == "distributed") == distributed, f"snippets/{name}.py: wrong kind"


def test_the_checker_carries_the_gates_pins_and_warning_filters(module):
    import tomllib

    from tools.snippets import version_gates

    assert set(module.GATES) == set(version_gates()), "check_guide.py's gates differ from snippets/versions.toml"
    for name, gate in version_gates().items():
        assert module.GATES[name]["label"] == gate.label, f"check_guide.py: gate {name} differs"
    assert module.TORCH == re.search(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    pins = "".join((ROOT / f).read_text(encoding="utf-8") for f in [*checker.OPTIONAL_REQUIREMENTS, checker.REQUIREMENTS])
    for library, requirement in module.LIBRARIES.items():
        assert re.search(rf"^{re.escape(requirement)}\b", pins, re.M), f"{requirement} is not pinned"
    for library in ("tensorflow", "jax", "torchvision", "transformers", "captum", "lightning", "opacus", "accelerate",
                    "numpy"):
        assert library in module.LIBRARIES, f"check_guide.py does not know the optional library {library}"
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    assert module.WARNING_FILTERS == pytest_options["ini_options"]["filterwarnings"]


def test_the_checker_needs_only_the_standard_library_and_torch(generated):
    tree = ast.parse(generated.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    outside = sorted(imported - set(sys.stdlib_module_names) - {"torch"})
    assert not outside, f"check_guide.py imports {outside}"
    text = generated.read_text(encoding="utf-8")
    assert checker.GENERATED_NOTE in text and checker.SOURCE_NOTE not in text, "check_guide.py does not say it is generated"


@pytest.mark.parametrize("want, got", [
    ("a  \nb\n", "a\nb   \n"),                # trailing whitespace, either side
    ("x at 0x...\n", "x at 0x7f3a\n"),         # an address
    ("path: ...\n", "path:\n"),                # the space before a line-ending ... (Sybil's rule)
    ("tensor([1.])\n", "tensor([1.0])\n"),     # no NUMBER: a different number is a difference
    ("a\nb\n", "a\n\nb\n"),                    # no NORMALIZE_WHITESPACE
    ("a\n<BLANKLINE>\nb\n", "a\n\nb\n"),
])
def test_the_checker_compares_as_the_tests_do(module, want, got):
    import doctest

    from sybil.evaluators.doctest import OutputChecker

    from tools.snippets import FLAGS

    assert module.FLAGS == FLAGS
    ours, theirs = module.CHECKER.check_output(want, got, FLAGS), OutputChecker().check_output(want, got, FLAGS)
    assert ours == theirs, f"check_guide.py says {ours}, the tests say {theirs}, for {want!r} vs {got!r}"
    example = doctest.Example("print()\n", want)
    assert module.CHECKER.output_difference(example, got, FLAGS) == OutputChecker().output_difference(example, got, FLAGS)


def test_the_checker_runs_where_the_tests_say_the_output_differs(module):
    """A gate's releases, as the tests read them (tools.snippets.Gate.excludes)."""
    from tools.snippets import version_gates

    for name, gate in version_gates().items():
        for release in [(2, minor) for minor in range(0, 20)]:
            assert module.gate_excludes(module.GATES[name], release) == gate.excludes(release), (
                f"check_guide.py: gate {name} on {release}")


# --- (b), (c), (d) run as a reader runs it ----------------------------------------------------

def _line(stdout: str, page: str) -> str:
    found = [line for line in stdout.splitlines() if line.split(" ", 1)[0] == page]
    assert len(found) == 1, f"check_guide.py printed no line (or several) for {page}:\n{stdout}"
    return found[0]


def test_a_page_passes_and_a_page_without_its_libraries_is_not_run(reader):
    hidden, process = reader
    stdout, stderr = process.communicate(timeout=300)
    code = process.returncode
    assert code == 0, f"check_guide.py exited with {code}:\n{stdout}\n{stderr}"
    assert re.match(rf"{PASSING_PAGE} +passed +4 snippets", _line(stdout, PASSING_PAGE)), stdout
    missing = _line(stdout, MISSING_PAGE)
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
                    rf"1 not run: needs {PROBE_LIBRARY} ", _line(stdout, "probe")), f"{stdout}\n{stderr}"
    for name in ("probe_libraries", "probe_distributed"):
        assert not _probe_diff(stdout, name), f"{name}: the empty folder stood for the library:\n{stdout}"


def test_a_run_leaves_nothing_in_the_temporary_folder(probe):
    """The examples' temporary folders (in this process, a script's, the distributed workers')
    go to the checker's own folder, which goes at the end."""
    code, stdout, stderr, temporary = probe()
    assert "probe_libraries" not in _line(stdout, "probe"), stdout  # it made its folder
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


@pytest.fixture
def changed(generated, tmp_path):
    """A copy of the checker with one expected output line changed."""
    text = generated.read_text(encoding="utf-8")
    assert text.count(BROKEN_LINE + "\n") == 1, f"{BROKEN_LINE!r} must occur once in the checker"
    copy = tmp_path / "check_guide.py"
    copy.write_text(text.replace(BROKEN_LINE + "\n", CHANGED_LINE + "\n"), encoding="utf-8")
    return _load(copy)


def _main_here(module, args: list[str], capsys) -> tuple[int, str]:
    """main() in this process (torch is imported already): it returns the status that
    `python check_guide.py` exits with. The snippets' modules of this process
    (tests/test_examples.py) and its environment are left as they were."""
    saved = {name: m for name, m in sys.modules.items() if name.startswith("snippets_")}
    environment = dict(os.environ)  # main() hides the GPUs from the examples
    try:
        code = module.main(args)
    finally:
        for name in [n for n in sys.modules if n.startswith("snippets_")]:
            del sys.modules[name]
        sys.modules.update(saved)
        os.environ.clear()
        os.environ.update(environment)
    return code, capsys.readouterr().out


def _section_of(page: Path, name: str) -> str:
    """The anchor of the last heading above the page's include of snippet `name`."""
    text = page.read_text(encoding="utf-8")
    above = text[: text.index(f'--8<-- "{name}.md"')]
    return re.findall(r"^#+ .*\{ #([\w-]+) \}$", above, re.MULTILINE)[-1]


def test_a_changed_output_line_fails_and_shows_the_line_and_where_it_is(changed, capsys):
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} although an expected line was changed:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +differs +1 of 1 snippet differ: non_leaf_grad_warning",
                    _line(stdout, BROKEN_PAGE)), stdout
    examples = Snippet.load(SNIPPETS / "non_leaf_grad_warning.md").examples()
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


# A gate made up for the test: the current torch is a release it excludes, so non_leaf_grad_warning
# (its page's copy has CHANGED_LINE) is compared with what the guide "recorded" on this release.
VERSION = __import__("torch").__version__.split("+")[0]


def _gate(**recorded) -> dict:
    gate = {"since": "99.0", "label": "torch 99.0+", "why": "a made-up reason"}
    return {**gate, "recorded": [recorded]} if recorded else gate


def _body(name: str, text: str | None = None) -> str:
    return FENCE.search(text or (SNIPPETS / f"{name}.md").read_text(encoding="utf-8"))["body"]


def test_on_a_gated_release_its_exact_recorded_output_differs_as_the_page_says(changed, capsys):
    changed.GATES["non_leaf_grad_warning"] = _gate(releases=["2.4.1", VERSION], kind="pycon",
                                                  body=_body("non_leaf_grad_warning"))
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 0, f"check_guide.py returned {code} for the output recorded on this release:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +passed .*non_leaf_grad_warning: differs as the page says "
                    r"\(torch 99\.0\+: a made-up reason\)", _line(stdout, BROKEN_PAGE)), stdout
    assert "0 differ, 1 differ as their pages say" in stdout, stdout


def test_on_a_gated_release_a_changed_recorded_line_fails(changed, capsys):
    changed_text = changed.SNIPPETS["non_leaf_grad_warning"]["text"]
    changed.GATES["non_leaf_grad_warning"] = _gate(releases=[VERSION], kind="pycon",
                                                  body=_body("non_leaf_grad_warning", changed_text))
    changed.SNIPPETS["non_leaf_grad_warning"]["text"] = (SNIPPETS / "non_leaf_grad_warning.md").read_text()
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} for output other than recorded:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +differs +1 of 1 snippet differ", _line(stdout, BROKEN_PAGE)), stdout
    assert f"against the output the guide recorded on torch {VERSION}:" in stdout, stdout
    assert f"Expected:\n    {CHANGED_LINE}\nGot:\n    {BROKEN_LINE}" in stdout, stdout
    assert "the page's note: on torch " in stdout and "(torch 99.0+: a made-up reason)" in stdout, stdout


def test_on_a_gated_release_the_guide_never_ran_only_the_pages_output_passes(module, changed, capsys, monkeypatch):
    """No recording of this release: the page's own output passes; anything else differs."""
    gate = _gate(releases=["2.4.1"], kind="pycon", body=_body("non_leaf_grad_warning"))
    monkeypatch.setitem(module.GATES, "non_leaf_grad_warning", gate)
    code, stdout = _main_here(module, ["--page", BROKEN_PAGE], capsys)
    assert code == 0 and re.match(rf"{BROKEN_PAGE} +passed +1 snippet", _line(stdout, BROKEN_PAGE)), stdout
    changed.GATES["non_leaf_grad_warning"] = gate
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} on a release the guide has no output of:\n{stdout}"
    release = ".".join(VERSION.split(".")[:2])
    assert (f"The guide has no recorded output of this example for torch {release}; the page's note says "
            "it differs (torch 99.0+: a made-up reason).") in stdout, stdout


CRASH = """```pycon title="crash"
>>> numbers = [1, 0]
>>> print(1 / numbers[1])
inf
>>> print("after")
after
```
"""


def _doctest_here(module, text: str, gate: dict):
    """run_doctest on a snippet made up for the test, in this process; its module is dropped."""
    module.GATES["crash"] = gate
    try:
        return module.run_doctest("crash", {"kind": "doctest", "needs": [], "text": text}, module.release(VERSION))
    finally:
        sys.modules.pop("snippets_crash_md", None)


@pytest.mark.parametrize("recorded, status", [
    ("inf\n", "differs"),                                                          # it crashes here
    ("Traceback (most recent call last):\n  ...\nValueError: another error\n", "differs"),
    ("Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero\n", "differs as the page says"),
])
def test_on_a_gated_release_a_crash_is_a_difference_unless_recorded(changed, recorded, status):
    body = _body("crash", CRASH)
    recording = body[: body.index(">>> print(1 /")] + ">>> print(1 / numbers[1])\n" + recorded
    result = _doctest_here(changed, CRASH, _gate(releases=[VERSION], kind="pycon", body=recording))
    assert result.status == status, f"{result.status}: {result.diffs}"
    if status == "differs":
        assert "ZeroDivisionError: division by zero" in "".join(result.diffs), result.diffs
    else:  # the recording ends with the exception: the examples after it are not run
        assert result.matched == 2 and not result.diffs, (result.matched, result.diffs)


@pytest.mark.parametrize("code, stderr, recorded, status", [
    (0, "", "a\nb\n", "differs as the page says"),
    (1, "Traceback (most recent call last):\nAttributeError: no record_event\n",
     "a\nb\n[failed] AttributeError: no record_event\n", "differs as the page says"),
    (1, "Traceback (most recent call last):\nKeyError: 'x'\n", "a\nb\n[failed] AttributeError: no record_event\n",
     "differs"),
    (0, "", "a\nc\n", "differs"),
])
def test_on_a_gated_release_a_script_is_compared_with_its_recorded_output(changed, code, stderr, recorded, status):
    changed.SNIPPETS["crash"] = {"kind": "script", "needs": [], "source": "", "output": "a\nB\n"}
    changed.GATES["crash"] = _gate(releases=[VERSION], kind="text", body=recorded)
    result = changed.Result("crash", 1)
    changed._script_result(result, code, "a\nb\n", stderr, changed.release(VERSION))
    assert result.status == status, (result.status, result.diffs)
    if status == "differs":
        assert f"--- recorded on torch {VERSION}\n+++ printed on torch " in result.diffs[0], result.diffs


def test_the_checker_needs_numpy_for_the_object_collectives(module, changed, monkeypatch):
    for name, snippet in module.SNIPPETS.items():
        code = snippet.get("text") or snippet["source"]
        if re.search(r"\.numpy\(|_object(_list)?\(", code):
            assert "numpy" in snippet["needs"], f"{name} needs numpy, and does not say so"
    monkeypatch.setattr(changed, "_installed", lambda name: name != "numpy")  # a torch without numpy
    text = '```pycon title="crash"\n>>> raise RuntimeError("Numpy is not available")\n```\n'
    result = _doctest_here(changed, text, {"since": "0.0", "label": "", "why": ""})
    assert (result.status, result.why) == ("not run", "numpy"), (result.status, result.diffs)
    script = changed.Result("crash", 1)
    changed._script_result(script, 1, "", "RuntimeError: Numpy is not available\n", changed.release(VERSION))
    assert (script.status, script.why) == ("not run", "numpy"), (script.status, script.diffs)


def test_the_checker_records_a_script_as_the_guide_does(module):
    stderr = "Traceback (most recent call last):\n  File \"x.py\", line 1\nAttributeError: no record_event\n"
    for code, err in [(0, ""), (1, stderr), (1, ""), (-9, "killed\n")]:
        assert module.script_body("a\n", code, err) == releases.script_body("a\n", code, err)


def test_the_checker_carries_the_recorded_outputs(tmp_path, monkeypatch):
    from tools.snippets import version_gates

    name = sorted(version_gates())[0]
    sections = [releases.Section(["2.4.1", "2.6.0"], "pycon", ">>> print(1)\n2\n"),
                releases.Section(["2.9.1"], "text", "2\n[failed] RuntimeError: x\n")]
    (tmp_path / f"{name}.md").write_text(releases.render(f"{name}.md", sections), encoding="utf-8")
    monkeypatch.setattr(releases, "FOLDER", tmp_path)
    gates = json.loads(re.search(r"^GATES = (.*?)^SCRIPT_TIMEOUT", checker.render(), re.M | re.S).group(1))
    assert gates[name]["recorded"] == [{"releases": s.releases, "kind": s.kind, "body": s.body} for s in sections]
    assert gates[name]["why"] == version_gates()[name].why


# --- (e) the downloads on each built page ---------------------------------------------------

BOX = re.compile(r'<div class="admonition example guide-downloads">(.*?)</div>', re.DOTALL)


def _box_links(text: str) -> list[str]:
    boxes = BOX.findall(text)
    assert len(boxes) <= 1, "more than one downloads box"
    return [html.unescape(href) for href in re.findall(r'<a href="([^"]+)" download', boxes[0])] if boxes else []


def _resolve(site: Path, built: Path, href: str) -> Path:
    assert "://" not in href and not href.startswith("/"), f"{href}: not a relative link"
    folder = built.parent.relative_to(site).as_posix()
    target = urljoin("http://site/" + ("" if folder == "." else folder + "/"), href)
    return site / target.removeprefix("http://site/")


@pytest.mark.parametrize("page", PAGES, ids=[p.rel for p in PAGES])
def test_each_page_offers_its_examples_and_the_checker(site, page):
    built = site_path(page, site)
    text = built.read_text(encoding="utf-8")
    examples = checker.page_examples(page.path)
    links = _box_links(text)
    if not examples:
        assert not links, f"{page.rel} has no examples, but a downloads box"
        return
    name = checker.page_name(page.path)
    doctests = [e for e in examples if e.kind == "doctest"]
    if page.path.suffix == ".ipynb":
        expected = [page.path.name]
    else:
        stem = downloads.download_stem(name)
        expected = [f"{stem}.py", f"{stem}.ipynb"] if doctests else []
        expected += [f"{e.name}.py" for e in examples if e.kind != "doctest"]
    assert [link.split("/")[-1] for link in links] == expected + ["check_guide.py"], f"{page.rel}: {links}"
    for link in links:
        assert _resolve(site, built, link).is_file(), f"{page.rel}: the download link {link} is broken"
    checker_file = _resolve(site, built, links[-1])
    assert checker_file.parent == (site / "zh" if page.is_zh else site), f"{page.rel}: {links[-1]} leaves the language root"
    assert f"--page {name}</code>" in text, f"{page.rel}: the box does not give the page's checker command"
    label = "在你的 torch 上检查" if page.is_zh else "check every example of the guide on your torch"
    assert label in BOX.search(text).group(1), f"{page.rel}: the box is not in the page's language"
    for example in examples:
        if example.kind != "doctest":
            assert (built.parent / f"{example.name}.py").read_text(encoding="utf-8") == example.text, (
                f"{page.rel}: {example.name}.py is not snippets/{example.name}.py")
    if doctests and page.path.suffix != ".ipynb":
        _check_script(built.parent / f"{stem}.py", page, doctests)
        _check_notebook(built.parent / f"{stem}.ipynb", page, doctests, built.parent.relative_to(site).as_posix())


def _check_script(path: Path, page: Source, doctests) -> None:
    script = path.read_text(encoding="utf-8")
    compile(script, str(path), "exec")  # a syntax error fails here, naming the file
    for example in doctests:
        assert f"# --- {example.name} (snippets/{example.name}.md)" in script, f"{page.rel}: {path.name} lacks {example.name}"
        for each in downloads.doctests(example):
            assert each.source.rstrip("\n") in script, f"{page.rel}: {path.name} lacks code of {example.name}"


def _check_notebook(path: Path, page: Source, doctests, folder: str) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4, f"{page.rel}: {path.name} is not nbformat 4"
    first = notebook["cells"][0]
    address = "" if folder == "." else folder + "/"
    assert first["cell_type"] == "markdown" and "".join(first["source"]).startswith("# "), (
        f"{page.rel}: {path.name} does not start with the page's title")
    assert re.search(rf"^https?://\S+/{re.escape(address)}$", "".join(first["source"]), re.M), (
        f"{page.rel}: {path.name} does not give the page's address")
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code" and "snippet" in cell["metadata"]]
    assert [cell["metadata"]["snippet"] for cell in code] == [e.name for e in doctests], f"{page.rel}: {path.name}'s cells"
    for cell, example in zip(code, doctests):
        printed = "".join("".join(output["text"]) for output in cell["outputs"] if output["output_type"] == "stream")
        expected = Snippet.load(SNIPPETS / f"{example.name}.md").expected_output().replace("<BLANKLINE>", "")
        assert printed == expected, f"{page.rel}: {path.name}'s cell {example.name} shows another output than its snippet"
        assert Snippet.load(SNIPPETS / f"{example.name}.md").script().rstrip("\n") in "".join(cell["source"]), (
            f"{page.rel}: {path.name}'s cell {example.name} is not its snippet's code")


def test_the_site_serves_the_generated_checker(site, monkeypatch):
    monkeypatch.setenv("SITE_URL", SITE_URL)  # the build's address, where the checker's links point
    rendered = checker.render()
    for path in (site / "check_guide.py", site / "zh" / "check_guide.py"):
        assert path.is_file(), f"{path.relative_to(site)} was not written"
        assert path.read_text(encoding="utf-8") == rendered, f"{path.relative_to(site)} is not what tools/reader/checker.py writes"


@pytest.mark.parametrize("error", [ImportError("\n\nrequires PyTorch >= 2.6\nmore"), KeyError("key"),
                                   ValueError(), RuntimeError("a: b\nc")], ids=repr)
def test_the_checker_writes_an_exception_as_the_guide_records_it(module, error):
    """A recorded release output ends with an exception's first line (tools.snippets.exception_line);
    the checker must write a raised one the same way, or a recorded crash never matches."""
    from tools.examples.evaluate import exception_line

    assert module.exception_line(error) == exception_line(error)


def test_a_difference_where_the_page_says_the_output_varies_is_reported_not_failed(changed, capsys):
    """varies_on (snippets/versions.toml): on such a release a differing run is reported as
    varying, with its diff, and does not fail; on any other release the same change fails."""
    release = ".".join(VERSION.split(".")[:2])
    changed.GATES["non_leaf_grad_warning"] = {"since": "1.0", "varies_on": [release], "label": "varies",
                                              "why": "a made-up reason"}
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 0, f"check_guide.py returned {code} where the page says the output varies:\n{stdout}"
    assert "varies from run to run, as the page says" in _line(stdout, BROKEN_PAGE), stdout
    assert "1 varies from run to run." in stdout and f"Got:\n    {BROKEN_LINE}" in stdout, stdout
    changed.GATES["non_leaf_grad_warning"]["varies_on"] = ["99.0"]
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE], capsys)
    assert code == 1, stdout


def test_a_script_that_needs_a_module_torch_needs_there_is_not_run(module):
    """torch 2.9's inductor imports setuptools (torch.utils.cpp_extension), which a venv made by
    uv lacks: the reader is told what to install, not that the page is wrong."""
    name = next(n for n, s in module.SNIPPETS.items() if s["kind"] == "script")
    result = module.Result(name, 1)
    stderr = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'made_up_setuptools'\n"
    module._script_result(result, 1, "", stderr, module.release("2.13"))
    assert (result.status, result.why) == (module.NOT_RUN, "made_up_setuptools")
    result = module.Result(name, 1)
    module._script_result(result, 1, "", "ModuleNotFoundError: No module named 'os'\n", module.release("2.13"))
    assert result.status == module.DIFFERS  # os is there: a real difference
