"""The reader's checker (tools/checker.py writes check_guide.py) and each page's downloads
(tools/downloads.py, read from the session's build).

The full checker run takes minutes (`make check-guide`). Here it runs once as a reader runs it,
`python check_guide.py` in a folder of its own, on two cheap pages: one passes, and one whose
libraries are hidden is not run. A copy with one expected line changed runs its main() in this
process, where torch is imported already: it must fail, naming the snippet and its line and
showing the line, unless a gate says the page's output differs on this release.
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

from tests.pages import Source, pages, site_path
from tests.test_site import builds, site  # noqa: F401  (the session's strict build)
from tools import checker, downloads
from tools.snippets import ROOT, SNIPPETS, Snippet

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


def _included(source: Path) -> list[str]:
    """The examples a page includes, found as tests/pages.py finds includes."""
    names = []
    for include in Source(source).includes():
        if "/" not in include and include.endswith((".md", ".py")) and Path(include).stem not in names:
            names.append(Path(include).stem)
    return names


# --- (a) what the checker carries ------------------------------------------------------------

def test_the_checker_carries_every_page_with_examples_in_nav_order(module, reader):
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


def test_a_changed_output_line_fails_and_shows_the_line(changed, capsys):
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE, "--diff"], capsys)
    assert code == 1, f"check_guide.py returned {code} although an expected line was changed:\n{stdout}"
    assert re.match(rf"{BROKEN_PAGE} +differs +1 of 1 snippet differ: non_leaf_grad_warning",
                    _line(stdout, BROKEN_PAGE)), stdout
    number = next(i for i, line in enumerate((SNIPPETS / "non_leaf_grad_warning.md").read_text().splitlines(), 1)
                  if line.startswith(">>>") and "leaves:" in line)
    assert f"snippets/non_leaf_grad_warning.md, line {number}:" in stdout, stdout
    assert f"Expected:\n    {CHANGED_LINE}\nGot:\n    {BROKEN_LINE}" in stdout, stdout
    assert "1 snippet printed something other than the guide shows." in stdout, stdout


def test_a_difference_the_page_declares_is_reported_and_not_a_failure(changed, capsys):
    """Outside a gate's releases (snippets/versions.toml) the page says the output differs."""
    changed.GATES["non_leaf_grad_warning"] = {"since": "99.0", "label": "torch 99.0+", "why": "a test"}
    code, stdout = _main_here(changed, ["--page", BROKEN_PAGE], capsys)
    assert code == 0, f"check_guide.py returned {code} for a difference its page declares:\n{stdout}"
    line = _line(stdout, BROKEN_PAGE)
    assert re.match(rf"{BROKEN_PAGE} +passed .*non_leaf_grad_warning: differs as the page says \(torch 99\.0\+\)", line), stdout
    assert "0 differ, 1 differ as their pages say" in stdout, stdout


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


def test_the_site_serves_the_generated_checker(site):
    rendered = checker.render()
    for path in (site / "check_guide.py", site / "zh" / "check_guide.py"):
        assert path.is_file(), f"{path.relative_to(site)} was not written"
        assert path.read_text(encoding="utf-8") == rendered, f"{path.relative_to(site)} is not what tools/checker.py writes"
