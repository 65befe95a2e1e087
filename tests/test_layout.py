"""The repository's layout shows its architecture: tools/ by role, snippets/ by page, short files.

tools/__init__.py says which package may import which; these tests hold the code to it.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pages import pages
from tools.snippets import DOCS, ROOT, SHARED, SNIPPETS, script_paths, snippet_paths

TOOLS = ROOT / "tools"
PACKAGES = sorted(p.name for p in TOOLS.iterdir() if p.is_dir() and p.name != "__pycache__")

# What each package may import from tools/ (besides itself); tools/__init__.py explains why.
MAY_IMPORT = {
    "snippets": set(),
    "dev": set(),
    "site": {"snippets", "reader", "generate"},
    "reader": {"snippets"},
    "examples": {"snippets", "reader"},
    "measure": {"snippets", "dev"},
    "generate": {"snippets", "dev"},
}
MAX_LINES = 400


def _python_files() -> list[str]:
    """Every tracked or new Python file (git's view: .venv, build/ and site/ are ignored)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return sorted(name for name in listed if (ROOT / name).is_file())


def test_tools_holds_packages_only():
    loose = sorted(p.name for p in TOOLS.iterdir()
                   if p.is_file() and p.name != "__init__.py" and p.suffix == ".py")
    assert not loose, f"tools/ holds modules outside a package: {loose}; move each to the package of its role"
    assert set(PACKAGES) == set(MAY_IMPORT), (
        f"tools/ has packages {PACKAGES}; tests/test_layout.py's MAY_IMPORT names {sorted(MAY_IMPORT)}: "
        "a new package needs its entry there and in tools/__init__.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_what_it_is_for(package):
    init = TOOLS / package / "__init__.py"
    assert init.is_file(), f"tools/{package}/ has no __init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc and len(doc) > 80, f"tools/{package}/__init__.py: say in its docstring what the package is for"
    assert package in (TOOLS / "__init__.py").read_text(encoding="utf-8"), \
        f"tools/__init__.py does not describe tools/{package}/"


def _imported_packages(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level:  # relative: which package it reaches is unclear
            found.add("relative import")
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tools" and len(parts) > 1 and parts[1] in MAY_IMPORT:
                found.add(parts[1])
            elif parts[0] == "tests":
                found.add("tests")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_follow_the_layers(package):
    wrong = []
    for path in sorted((TOOLS / package).rglob("*.py")):
        for imported in sorted(_imported_packages(path) - {package} - MAY_IMPORT[package]):
            wrong.append(f"{path.relative_to(ROOT)} imports tools.{imported}")
    assert not wrong, (f"tools/{package}/ may import only {sorted(MAY_IMPORT[package]) or 'nothing else'} "
                       "from tools/ (tools/__init__.py says why):\n" + "\n".join(wrong))


def test_the_layer_check_can_fail(tmp_path):
    module = tmp_path / "hook.py"
    module.write_text("from tools.examples.evaluate import run_as_script\nimport tools.snippets\n"
                      "from tests.pages import pages\nfrom . import sibling\n")
    assert _imported_packages(module) == {"examples", "snippets", "tests", "relative import"}


def test_no_python_file_is_too_long():
    long = [f"{name}: {n} lines" for name in _python_files()
            if (n := len((ROOT / name).read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, (f"over {MAX_LINES} lines; split each by concern (CONTRIBUTING.md, "
                      "'Map of the repository'):\n" + "\n".join(long))


# --- snippets/ by page ---------------------------------------------------------------------------

def _including_pages() -> dict[str, set[str]]:
    """A snippet file (its path under snippets/) -> the pages that include it, each named by its
    path under docs/ without the suffix: the folder its snippets live in."""
    found: dict[str, set[str]] = {}
    for page in pages():
        if not page.is_zh:
            key = page.path.relative_to(DOCS).with_suffix("").as_posix()
            for include in page.includes():
                found.setdefault(include, set()).add(key)
    return found


def placement_problems(files: list, including: dict[str, set[str]]) -> list[str]:
    problems = []
    for path in files:
        under = path.relative_to(SNIPPETS).as_posix()
        folder, pages_ = path.parent.relative_to(SNIPPETS).as_posix(), sorted(including.get(under, ()))
        if folder == SHARED:
            if len(pages_) < 2:
                home = f"snippets/{pages_[0]}/" if pages_ else "the folder of the page that includes it"
                problems.append(f"snippets/{under}: in {SHARED}/, but {len(pages_)} page includes it: move it "
                                f"to {home}")
        elif folder not in pages_:
            where = (f"snippets/{pages_[0]}/" if len(pages_) == 1 else f"snippets/{SHARED}/" if pages_
                     else "the folder of the page that includes it (none does)")
            problems.append(f"snippets/{under}: its folder is no page that includes it "
                            f"({', '.join(pages_) or 'none'}): move it to {where}")
    return problems


def test_every_snippet_lives_in_the_folder_of_a_page_that_includes_it():
    files = snippet_paths() + script_paths()
    problems = placement_problems(files, _including_pages())
    assert not problems, ("snippets/<page>/ holds the snippets that page includes, snippets/shared/ those two or "
                          "more pages include (CONTRIBUTING.md, 'Add an example'):\n" + "\n".join(problems))


def test_the_placement_check_can_fail():
    lone, shared = SNIPPETS / "pitfalls" / "lone.md", SNIPPETS / SHARED / "once.md"
    problems = placement_problems([lone, shared], {"pitfalls/lone.md": {"techniques/retain-grad"},
                                                   "shared/once.md": {"pitfalls"}})
    assert problems == [
        "snippets/pitfalls/lone.md: its folder is no page that includes it (techniques/retain-grad): "
        "move it to snippets/techniques/retain-grad/",
        "snippets/shared/once.md: in shared/, but 1 page includes it: move it to snippets/pitfalls/",
    ]


def test_snippet_names_are_unique_across_folders():
    """versions.toml, the recorded release outputs and the matrix's results key on the name."""
    seen: dict[str, list[str]] = {}
    for path in snippet_paths() + script_paths():
        seen.setdefault(path.stem, []).append(path.relative_to(SNIPPETS).as_posix())
    twice = {name: where for name, where in seen.items() if len(where) > 1}
    assert not twice, f"one name, several snippets: {twice}; rename one"


def test_nothing_lies_loose_in_snippets():
    """Only versions.toml sits at the top; every other file is in a page's folder."""
    loose = sorted(p.name for p in SNIPPETS.iterdir() if p.is_file() and p.name != "versions.toml")
    assert not loose, f"snippets/ holds {loose} outside a page's folder: move each to snippets/<page>/"


# --- The site installs without torch ---------------------------------------------------------------

HEAVY = {"torch", "numpy", "tensorflow", "jax", "torchvision", "transformers", "captum", "lightning",
         "opacus", "pytest", "sybil", "ipykernel", "IPython"}
BLOCK_HEAVY = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {heavy!r}:
            raise ImportError(f"the site build imported {{name}}, which requirements-site.txt does not install")
sys.meta_path.insert(0, Block())
import yaml, pathlib
for hook in yaml.safe_load(pathlib.Path("mkdocs.yml").read_text().replace("!ENV", "").replace("!relative", ""))["hooks"]:
    __import__(hook.removesuffix(".py").replace("/", "."))
print("ok")
"""


def test_the_site_hooks_import_nothing_the_site_install_lacks():
    """make serve installs requirements-site.txt only: its hooks must import without torch."""
    result = subprocess.run([sys.executable, "-c", BLOCK_HEAVY.format(heavy=HEAVY)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr[-2000:]


def test_the_site_requirements_leave_out_torch_and_the_tests():
    pins = {re.match(r"[A-Za-z0-9_.-]+", line)[0].lower() for line in
            (ROOT / "requirements-site.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith(("#", "-"))}
    assert not pins & {h.lower() for h in HEAVY}, f"requirements-site.txt pins {sorted(pins & HEAVY)}"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for goal in ("serve", "build"):
        assert re.search(rf"^{goal}: install-site\b", makefile, re.MULTILINE), \
            f"make {goal} must install the site's requirements only (install-site)"


# --- Paths the prose names exist ------------------------------------------------------------------

MODULE = re.compile(r"python -m (tools(?:\.\w+)+)")
FILE = re.compile(r"(?<![\w./<>-])((?:tools|tests|snippets)/[\w./-]*\w(?:\.(?:py|md|json|toml|txt)\b|/))")


def _named_paths() -> list[tuple[str, str]]:
    """(file that names it, path or module) for every tools/tests/snippets path and every
    `python -m tools...` in the prose, the Makefile, mkdocs.yml, the workflows and the code."""
    found = []
    for name in subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.split():
        if not name.endswith((".md", ".py", ".yml", ".toml", ".txt", ".html", ".css")) and name != "Makefile":
            continue
        if name.startswith(("snippets/", "tests/test_")) or not (ROOT / name).is_file():  # tests make paths up
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        found += [(name, m) for m in MODULE.findall(text)] + [(name, m) for m in FILE.findall(text)]
    return found


def _exists(named: str) -> bool:
    if named.startswith("tools.") and "/" not in named:
        base = ROOT / Path(*named.split("."))
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    return (ROOT / named).exists()


def test_every_path_the_prose_names_exists():
    not_ours = {"tools/autograd/"}  # PyTorch's own tools/autograd/ (derivatives.yaml, gen_variable_type.py), cited by the pages
    stale = sorted({f"{where}: {named}" for where, named in _named_paths()
                    if not _exists(named) and not named.startswith(tuple(not_ours)) and "tmp" not in named})
    assert not stale, "these name a file or module that does not exist (moved?):\n" + "\n".join(stale)


def test_nothing_under_tools_tests_or_snippets_is_ignored_by_git():
    """An ignore rule meant for the built site/ once hid tools/site/: a new hook never got committed."""
    files = [str(p.relative_to(ROOT)) for folder in ("tools", "tests", "snippets", "docs")
             for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(files),
                             capture_output=True, text=True).stdout.split()
    assert not ignored, f".gitignore hides files of the project: {ignored[:10]}"
