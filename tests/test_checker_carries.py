"""What the reader's checker carries (tools/reader/checker.py writes check_guide.py), the parts it
is made of, and each page's downloads (tools/site/downloads.py, read from the session's build).

check_guide.py carries every page with examples in nav order, each example byte for byte, the
gates with the outputs recorded on other releases, the pins and the warning filters; it is one
file, its parts (tools/reader/runtime_*.py) joined without their preambles, and needs only the
standard library and torch. The site serves it, and every built page's downloads box links the
page's examples and it.
"""

from __future__ import annotations

import ast
import builtins
import html
import json
import re
import symtable
import sys
from pathlib import Path
from urllib.parse import urljoin

import pytest

from tests.checker_helpers import generated, module  # noqa: F401  (fixtures)
from tests.pages import Source, pages, site_path
from tests.built_site import SITE_URL, builds, site  # noqa: F401  (the session's strict build)
from tools.reader import checker
from tools.site import downloads
from tools.snippets import releases
from tools.snippets import ROOT, SNIPPETS, Snippet, find, is_snippet, rel

PAGES = pages()


# --- what the checker carries -----------------------------------------------------------------

def _included(source: Path) -> list[str]:
    """The examples a page includes, found as tests/pages.py finds includes."""
    names = []
    for include in Source(source).includes():
        if (is_snippet(SNIPPETS / include) and include.endswith((".md", ".py"))
                and Path(include).stem not in names):
            names.append(Path(include).stem)
    return names


def test_the_checker_carries_every_page_with_examples_in_nav_order(module):
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
            assert carried["text"] == find(name).read_text(encoding="utf-8"), (
                f"check_guide.py carries another text than {rel(find(name))}")
        else:
            assert carried["source"] == find(name, ".py").read_text(encoding="utf-8"), (
                f"check_guide.py carries another source than {rel(find(name, '.py'))}")
            assert carried["output"] == find(name, ".out").read_text(encoding="utf-8"), (
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


def test_the_checker_carries_the_recorded_outputs(tmp_path, monkeypatch):
    from tools.snippets import version_gates

    name = sorted(version_gates())[0]
    sections = [releases.Section(["2.4.1", "2.6.0"], "pycon", ">>> print(1)\n2\n"),
                releases.Section(["2.9.1"], "text", "2\n[failed] RuntimeError: x\n")]
    (tmp_path / f"{name}.md").write_text(releases.render(f"{name}.md", sections), encoding="utf-8")
    monkeypatch.setattr(releases, "path", lambda n: tmp_path / f"{n}.md")
    gates = json.loads(re.search(r"^GATES = (.*?)^SCRIPT_TIMEOUT", checker.render(), re.M | re.S).group(1))
    assert gates[name]["recorded"] == [{"releases": s.releases, "kind": s.kind, "body": s.body} for s in sections]
    assert gates[name]["why"] == version_gates()[name].why


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



# --- the parts of its code (tools/reader/runtime_*.py) ----------------------------------------

def _preamble_and_body(part: Path) -> tuple[str, str]:
    """A part's preamble (the first part has none) and the code check_guide.py takes from it."""
    text = part.read_text(encoding="utf-8")
    if part == checker.PARTS[0]:
        return "", text
    preamble, found, body = text.partition(checker.PREAMBLE_END)
    assert found, f"{part.name}: no line {checker.PREAMBLE_END.strip()!r} ends its preamble"
    return preamble, body


def _names(code: str) -> tuple[set[str], set[str]]:
    """(the names code defines at its top, the global names it reads in any of its scopes)."""
    top = symtable.symtable(code, "part", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    read = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    scopes = top.get_children()
    while scopes:
        scope = scopes.pop()
        read |= {s.get_name() for s in scope.get_symbols() if s.is_referenced() and s.is_global()}
        scopes += scope.get_children()
    return defined, read


def test_the_checker_is_its_parts_joined_without_their_preambles(generated):
    """A part's preamble only imports, under TYPE_CHECKING, what the part takes from the others:
    none of the part's code stands there, and none of the preamble reaches check_guide.py."""
    for part in checker.PARTS:
        for node in ast.parse(_preamble_and_body(part)[0]).body:
            names_only = (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
                          and all(isinstance(each, (ast.Import, ast.ImportFrom)) for each in node.body))
            assert names_only or (isinstance(node, ast.ImportFrom) and node.module in ("__future__", "typing")), (
                f"{part.name}: its preamble, which check_guide.py leaves out, has code: {ast.unparse(node)}")
    text = generated.read_text(encoding="utf-8")
    assert checker.PREAMBLE_END not in text and "TYPE_CHECKING" not in text, "a part's preamble is left in check_guide.py"
    assert not re.search(r"^\s*(from|import) tools\b", text, re.M), "check_guide.py imports the parts it is made of"


def test_each_part_names_what_it_takes_from_the_others():
    """What a part reads and does not define, its preamble imports (and nothing else): from the
    standard library, or from the part that defines it, which comes before it (the parts import one
    way only, so check_guide.py reads top down). check_guide.py, one file, has them all."""
    code = {part.stem: _preamble_and_body(part) for part in checker.PARTS}
    order = [part.stem for part in checker.PARTS]
    for part in checker.PARTS:
        preamble, body = code[part.stem]
        (defined, read), (imported, _) = _names(body), _names(preamble)
        missing = sorted(read - defined - imported - set(dir(builtins)) - {"__file__"})
        assert not missing, f"{part.name} uses {missing}: its preamble must import them"
        unused = sorted(imported - read - {"annotations", "TYPE_CHECKING"})
        assert not unused, f"{part.name}'s preamble imports {unused}, which the part does not use"
        for node in ast.walk(ast.parse(preamble)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tools."):
                source = node.module.removeprefix("tools.reader.")
                assert source in code, f"{part.name} imports from {node.module}, which is no part of check_guide.py"
                assert order.index(source) < order.index(part.stem), (
                    f"{part.name} imports from {source}.py, which comes after it in check_guide.py")
                undefined = sorted({alias.name for alias in node.names} - _names(code[source][1])[0])
                assert not undefined, f"{part.name} imports {undefined} from {source}.py, which does not define them"


# --- the downloads on each built page ---------------------------------------------------------

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


@pytest.fixture(scope="module")
def libraries() -> dict[str, str]:
    return checker.optional_libraries()  # reads every snippet: once, not once per page


@pytest.mark.parametrize("page", PAGES, ids=[p.rel for p in PAGES])
def test_each_page_offers_its_examples_and_the_checker(site, page, libraries):
    built = site_path(page, site)
    text = built.read_text(encoding="utf-8")
    examples = checker.page_examples(page.path, libraries)
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
                f"{page.rel}: {example.name}.py is not snippets/{example.file}")
    if doctests and page.path.suffix != ".ipynb":
        _check_script(built.parent / f"{stem}.py", page, doctests)
        _check_notebook(built.parent / f"{stem}.ipynb", page, doctests, built.parent.relative_to(site).as_posix())


def _check_script(path: Path, page: Source, doctests) -> None:
    script = path.read_text(encoding="utf-8")
    compile(script, str(path), "exec")  # a syntax error fails here, naming the file
    for example in doctests:
        assert f"# --- {example.name} (snippets/{example.file})" in script, f"{page.rel}: {path.name} lacks {example.name}"
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
        expected = Snippet.load(find(example.name)).expected_output().replace("<BLANKLINE>", "")
        assert printed == expected, f"{page.rel}: {path.name}'s cell {example.name} shows another output than its snippet"
        assert Snippet.load(find(example.name)).script().rstrip("\n") in "".join(cell["source"]), (
            f"{page.rel}: {path.name}'s cell {example.name} is not its snippet's code")


def test_the_site_serves_the_generated_checker(site, monkeypatch):
    monkeypatch.setenv("SITE_URL", SITE_URL)  # the build's address, where the checker's links point
    rendered = checker.render()
    for path in (site / "check_guide.py", site / "zh" / "check_guide.py"):
        assert path.is_file(), f"{path.relative_to(site)} was not written"
        assert path.read_text(encoding="utf-8") == rendered, f"{path.relative_to(site)} is not what tools/reader/checker.py writes"


@pytest.mark.parametrize("version, left", [("2.5.1+cu124", True), ("2.7.1", True), ("2.8.0", False),
                                           ("2.15.0+cpu", False)])
def test_the_runners_leave_the_group_to_the_process_exit_only_before_torch_2_8(module, monkeypatch, version, left):
    """Before 2.8, destroy_process_group() could hang a rank on the GIL (tools/examples/
    distributed_runner.py says why); both runners, the tests' and the reader's checker's, then
    leave the group to the forked process's os._exit. On 2.8 and later they call it as the script does."""
    import torch
    import torch.distributed as dist

    from tools.examples import distributed_runner

    original = dist.destroy_process_group
    monkeypatch.setattr(torch, "__version__", version)
    for leave in (distributed_runner.leave_the_group_on_old_torch, module._leave_the_group_on_old_torch):
        monkeypatch.setattr(dist, "destroy_process_group", original)  # the first set is what teardown restores
        leave()
        assert (dist.destroy_process_group is not original) == left, (leave.__module__, version)
