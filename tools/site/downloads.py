"""MkDocs hook (mkdocs.yml `hooks:`): each page's examples as downloads, and the reader's checker.

Next to every built page with examples, in each language:
- <page>-examples.py: the page's doctest examples as one script, in page order, each section headed by
  its snippet's name, with the outputs the tests check as comments under the lines that print them;
- <page>-examples.ipynb: the same as a notebook (nbformat 4, written with json): a Markdown cell with the
  page's title and address, then one code cell per snippet whose stream output is the snippet's
  expected output, the output the tests check;
- <snippet>.py: each script snippet as it is (they start processes of their own).
At the root of each language: check_guide.py (tools/reader/checker.py), which runs every example of the
guide on the reader's torch. The notebook page keeps its own download and links the checker.

page.guide_downloads carries the relative links for docs/overrides/partials/page-downloads.html.
"""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[2]) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.reader.checker import Example, optional_libraries, page_examples, page_name, render  # noqa: E402
from tools.generate.notebook import notebook_json  # noqa: E402
from tools.snippets import FENCE, copied_code  # noqa: E402

CHECKER = "check_guide.py"
_STATE: dict = {}


def on_pre_build(config):  # also before each language's build: the checker follows the sources
    _STATE.clear()


def doctests(example: Example) -> list[doctest.Example]:
    return doctest.DocTestParser().get_examples(FENCE.search(example.text)["body"], example.name)


def expected_output(example: Example) -> str:
    """What the snippet prints when it runs: its expected output, blank lines as printed."""
    return "".join(e.want for e in doctests(example)).replace("<BLANKLINE>", "")


def _compiles(example: Example) -> bool:
    return "torch.compile" in example.text or "torch._dynamo" in example.text


# A section after one that compiled starts as a new process would: Dynamo's caches (per function,
# with a recompile limit) would otherwise change the graph counts the page shows.
RESET = ("import torch._dynamo  # forget what the sections above compiled, as a new process would\n"
         "torch._dynamo.reset()\n")


def download_stem(name: str) -> str:
    """<page>-examples: the hyphen keeps the file from shadowing a library when it runs from its
    folder (a transformers.py there is what `import transformers` would find)."""
    return f"{name}-examples"


# torch._dynamo (which torch.func and torch.compile import) imports triton where it is installed,
# and importing triton after TensorFlow crashes the process (triton 3.7, tensorflow-cpu 2.21).
BEFORE_TENSORFLOW = ("import torch._dynamo  # first: triton, which it imports, crashes when loaded after"
                     " TensorFlow\n")


def _needs_tensorflow(examples: list[Example]) -> bool:
    return any("tensorflow" in e.needs for e in examples)


def page_script(title: str, url: str, stem: str, examples: list[Example]) -> str:
    lines = [
        f'"""The examples of "{title}": {url}\n',
        "Generated from the guide's tested snippets. Each section is one example of the page, in",
        "page order; the comments under a line are what it prints, the output the guide's tests",
        "check (... stands for an address or a path). The tests run each section on its own, in a",
        "fresh module; here they run one after another.",
        f"Run it with: python {stem}.py",
        '"""',
    ]
    if _needs_tensorflow(examples):
        lines += ["", BEFORE_TENSORFLOW.rstrip("\n")]
    compiled = False
    for example in examples:
        lines.append("")
        if example.kind != "doctest":
            lines.append(f"# --- {example.name}.py: a script of its own, downloaded next to this one:"
                         f" python {example.name}.py")
            continue
        header = f"# --- {example.name} (snippets/{example.file}) "
        lines.append(header + "-" * max(3, 99 - len(header)))
        if compiled:
            lines.append(RESET.rstrip("\n"))
        for each in doctests(example):
            lines.append(each.source.rstrip("\n"))
            lines += ["# " + line if line != "<BLANKLINE>" else "#" for line in each.want.splitlines()]
        compiled = compiled or _compiles(example)
    return "\n".join(lines) + "\n"


def _source_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines:
        lines[-1] = lines[-1].rstrip("\n")
    return lines


def page_notebook(title: str, url: str, zh: bool, examples: list[Example]) -> str:
    intro = ("本页的示例，每段一个代码单元；单元下的输出就是本指南的测试所核对的输出。" if zh else
             "The examples of this page, one code cell each; the output under a cell is the output "
             "the guide's tests check.")
    cells = [{"cell_type": "markdown", "metadata": {}, "source": _source_lines(f"# {title}\n\n{url}\n\n{intro}")}]
    if _needs_tensorflow(examples):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                      "source": _source_lines(BEFORE_TENSORFLOW)})
    compiled = False
    for example in examples:
        if example.kind != "doctest":
            text = (f"`{example.name}.py` 是一个独立的脚本（它会启动自己的进程）：从本页下载后运行 "
                    f"`python {example.name}.py`。" if zh else
                    f"`{example.name}.py` is a script of its own (it starts processes of its own): "
                    f"download it from the page and run `python {example.name}.py`.")
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _source_lines(text)})
            continue
        code = copied_code(FENCE.search(example.text)["body"])  # what the page's copy button gives
        if compiled:
            code = RESET + code
        printed = expected_output(example)
        cells.append({
            "cell_type": "code", "execution_count": None, "metadata": {"snippet": example.name},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": printed.splitlines(keepends=True)}]
            if printed else [],
            "source": _source_lines(code.rstrip("\n") + "\n"),
        })
        compiled = compiled or _compiles(example)
    return notebook_json(cells)


def _language_root(page, config) -> str:
    """'' for the default language, 'zh/' for a page of the Chinese site."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return ""
    first = page.url.split("/", 1)[0]
    others = {lang.locale for lang in i18n.config.languages if lang.locale != i18n.default_language}
    return first + "/" if first in others else ""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def on_page_context(context, page, config, nav):
    source = Path(page.file.abs_src_path)
    if "libraries" not in _STATE:  # read from every snippet: once per build, not once per page
        _STATE["libraries"] = optional_libraries()
    examples = page_examples(source, _STATE["libraries"])
    root = _language_root(page, config)
    if not examples and page_name(source) != "index":
        return context
    site = Path(config.site_dir)
    folder = Path(page.file.dest_uri).parent  # the page's folder: its downloads go there
    if root not in _STATE:  # the checker, once per language root and build
        if "checker" not in _STATE:
            _STATE["checker"] = render()
        _STATE[root] = True
        _write(site / root / CHECKER, _STATE["checker"])
    depth = len(folder.parts) - (1 if root else 0)
    name = page_name(source)
    downloads = {"name": name, "checker": "../" * depth + CHECKER, "script": None, "notebook": None,
                 "scripts": [], "examples": bool(examples)}
    if source.suffix == ".ipynb":  # the notebook page: its own download (mkdocs-jupyter's copy)
        downloads["notebook"] = (getattr(page, "nb_url", None) or source.name).split("/")[-1]
    elif examples:
        url = page.canonical_url or page.url
        doctest_examples = [e for e in examples if e.kind == "doctest"]
        if doctest_examples:
            stem = download_stem(name)
            downloads["script"], downloads["notebook"] = f"{stem}.py", f"{stem}.ipynb"
            _write(site / folder / downloads["script"], page_script(page.title, url, stem, examples))
            _write(site / folder / downloads["notebook"], page_notebook(page.title, url, bool(root), examples))
        for example in examples:
            if example.kind != "doctest":
                downloads["scripts"].append(f"{example.name}.py")
                _write(site / folder / f"{example.name}.py", example.text)
    page.guide_downloads = downloads
    return context
