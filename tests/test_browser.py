"""The built site in a real browser (Debian's Chromium, driven by Playwright), as a reader uses it.

One background job (started by conftest.py once the strict build is done, so it runs while the
examples run) visits every page of both languages through tests/browser.py, then runs every
piece of code a copy button gave, through tests/run_copied.py. The tests below only read the
records, one test per page and check.

Without Chromium or Playwright these tests are skipped with the reason, unless
GUIDE_REQUIRE_BROWSER=1 (set by .ci/run), where a missing browser fails them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sybil.evaluators.doctest import OutputChecker

from tests.browser import TOGGLE_PAGES, browse, missing_browser, same_origin
from tests.built_site import BUILD_TIMES, REPOSITORY, SITE_URL, builds  # noqa: F401  (builds: the session's strict build)
from tests.pages import Source, pages, site_path
from tests.run_copied import as_its_examples_ran
from tests.test_scripts import as_a_copy_ran
from tools.snippets import DOCS, FLAGS, ROOT

pytestmark = pytest.mark.browser

ENGLISH = [page for page in pages() if not page.is_zh]
EVERY = [page for page in pages()]
# The interface strings each language's pages must show (Material's own translations).
STRINGS = {
    "en": {"search": "Search", "copy": "Copy to clipboard", "toc": "Table of contents"},
    "zh": {"search": "搜索", "copy": "复制", "toc": "目录"},
}
CHINESE_QUERIES = ["梯度", "钩子", "叶子"]
RUNNABLE = {"pycon", "python", "cell"}  # cell: a notebook cell


def url_path(page: Source) -> str:
    """Where a page is served, relative to the site root: '', 'pitfalls/', 'zh/pitfalls/'."""
    built = site_path(page, Path("/site"))
    rel = built.parent.relative_to("/site").as_posix()
    return "" if rel == "." else rel + "/"


def pitfall_messages(page: Source) -> list[tuple[str, str]]:
    """(anchor, first quoted message) for each pitfall heading that quotes an error."""
    found = []
    for heading, anchor in page.headings():
        quoted = re.match(r'## "([^"]+)"', heading)
        if quoted and anchor:
            found.append((anchor, quoted.group(1)))
    return found


PITFALLS = {lang: Source(DOCS / name) for lang, name in (("en", "pitfalls.md"), ("zh", "pitfalls.zh.md"))}
ERROR_SEARCHES = [
    (lang, anchor, message) for lang, page in PITFALLS.items() for anchor, message in pitfall_messages(page)
]


def pasted_errors() -> dict[tuple[str, str], set[str]]:
    """{(language prefix, error line a page's examples print, or its prose quotes whole): the pages
    of that language that show it, as a line or the start of a longer one}, over every page but
    the compatibility tables (other releases' lines)."""
    printed = {page: page.shown_errors() + page.quoted_errors() for page in EVERY}
    showing = {("zh/" if page.is_zh else "", line): set() for page, lines in printed.items()
               if not page.path.name.startswith("compatibility.") for line in lines}
    for page, lines in printed.items():
        prefix = "zh/" if page.is_zh else ""
        for (lang, text), found in showing.items():
            if lang == prefix and any(text in line for line in lines):
                found.add(url_path(page))
    return showing


def as_a_terminal_prints(line: str) -> str:
    """The line as a reader pastes it from a terminal: a warning after the file and line that
    raised it, torch's build path where the page writes '(Triggered internally at...)', and the
    reader's own shapes, tensor types and node names where the page shows its example's."""
    text = line.replace("(Triggered internally at...)",
                        "(Triggered internally at /pytorch/aten/src/ATen/core/TensorBody.h:494.)")
    text = re.sub(r"torch\.Size\(\[[\d, ]*\]\)", "torch.Size([64, 3, 224, 224])", text)
    text = re.sub(r"\[torch\.\w+ \[[\d, ]*\]\]", "[torch.cuda.HalfTensor [64, 128, 7, 7]]", text)
    text = re.sub(r"\b[A-Z]\w*Backward\d\b",
                  lambda node: "MulBackward0" if node.group(0) == "AddmmBackward0" else "AddmmBackward0", text)
    if re.match(r"(?:[\w.]*\.)?[A-Z]\w*Warning: ", text):
        text = "/home/reader/project/train.py:42: " + text
    return text


PASTED = pasted_errors()
# The lines a terminal prints differently from the page, with the pages that show the page's line.
TERMINAL = {(prefix, as_a_terminal_prints(text)): showing for (prefix, text), showing in PASTED.items()
            if as_a_terminal_prints(text) != text}
# Every page prints numbers; a word graph that loses one (tools/site/search_rank.py, the Lunr fix)
# makes every query holding it fail, as "0" did on the Chinese site.
DIGITS = [str(d) for d in range(10)]
SEARCHES = {
    prefix: list(dict.fromkeys(
        DIGITS + (CHINESE_QUERIES if prefix else [])
        + [message for lang, _, message in ERROR_SEARCHES if (lang == "zh") == bool(prefix)]
        + [text for lang, text in PASTED if lang == prefix]
        + [text for lang, text in TERMINAL if lang == prefix]))
    for prefix in ("", "zh/")
}

_JOB: dict[str, Future] = {}
DRAWN: dict[str, dict[str, list[str]]] = {}  # page path -> {long query: the links Material drew}


def start_browser(site: Path, build: Future) -> None:
    """Start the browser job in a thread: wait for the build, browse the site; the copied code runs
    in a second process while the browsing goes on."""
    if _JOB or missing_browser():
        return
    result: Future = Future()
    _JOB["browse"] = result

    def job() -> None:
        try:
            if build.result().returncode != 0:
                raise RuntimeError("the strict build failed: see tests/test_site_pages.py")
            port = urlsplit(SITE_URL).port  # the address the site was built for
            started = time.perf_counter()
            with CopiedRunner() as runner:
                base, visits, searches, drawn = browse(
                    site, [url_path(page) for page in ENGLISH], SEARCHES, port, on_blocks=runner.submit,
                )
                BUILD_TIMES["browser: every page of both languages, searches"] = time.perf_counter() - started
                ran = runner.results()
            BUILD_TIMES["browser: ... and the copied code run (overlapping)"] = time.perf_counter() - started
            DRAWN.update(drawn)
            result.set_result((base, visits, searches, ran))
        except BaseException as error:  # reported by every test that reads the records
            result.set_exception(error)

    threading.Thread(target=job, daemon=True, name="browser").start()


class CopiedRunner:
    """tests/run_copied.py in a second process, fed each distinct piece of Python a copy button
    gave as soon as the browser has it; results() waits for the last: {(language, text): result}."""

    def __enter__(self) -> "CopiedRunner":
        self.folder = tempfile.TemporaryDirectory(prefix="guide-copied-")
        self.target = Path(self.folder.name) / "results.jsonl"
        self.jobs: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.log = Path(self.folder.name) / "stderr.txt"  # a file: a full pipe would block the runs
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.run_copied", str(self.target)], cwd=ROOT, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
            )
        return self

    def submit(self, blocks) -> None:
        with self.lock:  # called from the browser's worker threads
            self._submit(blocks)

    def _submit(self, blocks) -> None:
        for block in blocks:
            job = (block.language, block.copied)
            if block.language in RUNNABLE and job not in self.jobs:
                self.jobs.append(job)
                self.process.stdin.write(json.dumps({"language": job[0], "text": job[1]}) + "\n")
                self.process.stdin.flush()

    def results(self) -> dict[tuple[str, str], dict]:
        self.process.stdin.close()
        if self.process.wait(timeout=600) != 0:
            raise RuntimeError(f"tests/run_copied.py failed:\n{self.log.read_text()[-3000:]}")
        lines = self.target.read_text(encoding="utf-8").splitlines()
        return dict(zip(self.jobs, map(json.loads, lines)))

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.folder.cleanup()


@pytest.fixture(scope="session")
def browsed(builds):
    reason = missing_browser()
    if reason:
        if os.environ.get("GUIDE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GUIDE_REQUIRE_BROWSER=1 and {reason}")
        pytest.skip(reason)
    site, build = builds["site"]
    if not _JOB:  # run alone (conftest.py starts it earlier in a full run)
        done: Future = Future()
        done.set_result(build)
        start_browser(site, done)
    return _JOB["browse"].result(timeout=1200)


@pytest.fixture
def visit(browsed, page):
    base, visits, _, _ = browsed
    path = url_path(page)
    assert path in visits, f"{page.rel}: the browser did not visit {base}{path}"
    return visits[path]


each_page = pytest.mark.parametrize("page", EVERY, ids=[p.rel for p in EVERY])


# --- Copy ---------------------------------------------------------------------------------------

@each_page
def test_copy_buttons_copy_the_code_without_prompts_or_output(visit, page):
    for index, block in enumerate(visit.blocks):
        where = f"{page.rel}: code block {index + 1} ({block.language} {block.title})"
        assert block.copied.strip(), f"{where}: the copy button put nothing on the clipboard"
        assert block.copied.rstrip() == block.shown_code.rstrip(), (
            f"{where}: the clipboard holds something other than the code the page shows:\n"
            f"--- copied ---\n{block.copied}\n--- shown ---\n{block.shown_code}"
        )
        if block.language == "pycon":
            assert not re.search(r"^(>>>|\.\.\.) ", block.copied, re.MULTILINE), f"{where}: prompts were copied"


@each_page
def test_what_a_copy_carries_is_what_lands_on_the_clipboard(visit, page):
    """tests/browser.py records each copy from its copy event and reads the real clipboard back
    for the first and the last button of the page (and every notebook cell): the two agree."""
    if not visit.blocks:
        return
    read_back = {index: block for index, block in enumerate(visit.blocks) if block.on_clipboard is not None}
    assert {0, len(visit.blocks) - 1} <= set(read_back), (
        f"{page.rel}: the clipboard was not read back after the first and the last copy button")
    for index, block in read_back.items():
        assert block.on_clipboard == block.copied, (
            f"{page.rel}: code block {index + 1} ({block.language} {block.title}): the clipboard holds "
            f"something other than the button's copy event carried:\n--- clipboard ---\n{block.on_clipboard}\n"
            f"--- copy event ---\n{block.copied}")


@each_page
def test_copied_code_runs_and_prints_what_the_page_shows(browsed, visit, page):
    ran = browsed[3]
    blocks = [b for b in visit.blocks if b.language in RUNNABLE]
    checker = OutputChecker()  # Sybil's, as tests/test_examples.py compares: trailing spaces aside
    for index, block in enumerate(blocks):
        where = f"{page.rel}: the copied {block.title or block.language} (block {index + 1})"
        result = ran[(block.language, block.copied)]
        # Every pycon block comes from a snippet (the single source of code and outputs), and its copy
        # is recognised as that snippet's code, so it is not run here a second time.
        assert block.language != "pycon" or "snippet" in result, (
            f"{where} is no snippet's code as Snippet.script() gives it (tests/run_copied.py ran it again):"
            f"\n{block.copied}")
        if "snippet" in result:  # a snippet's code: tests/test_examples.py runs it as this script
            where += f" (= {result['snippet']}, whose examples tests/test_examples.py runs as this script)"
            result = as_its_examples_ran(result["snippet"], block.copied, index)
        if "script" in result:  # the file itself: tests/test_scripts.py's run is this copy's run
            where += f" (= {result['script']}, run by tests/test_scripts.py as a copy runs)"
            result = as_a_copy_ran(ROOT / result["script"])
        assert result["ok"], f"{where} fails when run as a script:\n{result['error']}"
        shown = block.shown_output
        if block.language == "pycon":
            matches = checker.check_output(shown, result["stdout"], FLAGS)
        else:
            matches = result["stdout"].rstrip() == shown.rstrip()
        assert matches, f"{where} prints something else:\n--- page ---\n{shown}--- printed ---\n{result['stdout']}"


@pytest.mark.parametrize("page", [p for p in EVERY if p.is_zh], ids=[p.rel for p in EVERY if p.is_zh])
def test_chinese_page_gives_the_same_code_as_the_english_one(browsed, page):
    visits = browsed[1]
    chinese, english = visits[url_path(page)], visits[url_path(Source(page.twin))]
    assert [b.copied for b in chinese.blocks] == [b.copied for b in english.blocks], (
        f"{page.rel}: its copy buttons give other code than {Source(page.twin).rel}'s"
    )


# --- Offline, errors, colours ---------------------------------------------------------------------

@each_page
def test_no_request_leaves_the_local_server(browsed, visit, page):
    base = browsed[0]
    outside = [url for url in visit.requests if not same_origin(url, base)]
    assert not outside, f"{page.rel}: requests to other hosts: {outside}"
    assert not visit.failed, f"{page.rel}: failed requests: {visit.failed}"


@each_page
def test_no_console_errors(visit, page):
    assert not visit.console, f"{page.rel}: console errors: {visit.console}"


TOGGLED = [p for p in EVERY if url_path(p).removeprefix("zh/") in TOGGLE_PAGES]


def test_the_toggled_pages_exist_in_both_languages():
    assert len(TOGGLED) == 2 * len(TOGGLE_PAGES), (
        f"tests/browser.py's TOGGLE_PAGES names a page the site does not have: "
        f"{sorted(set(TOGGLE_PAGES) - {url_path(p).removeprefix('zh/') for p in TOGGLED})}")


@pytest.mark.parametrize("page", TOGGLED, ids=[p.rel for p in TOGGLED])
def test_colour_toggle_switches_between_light_and_dark(visit, page):
    assert set(visit.schemes) == {"default", "slate"}, f"{page.rel}: the toggle went {visit.schemes}"


# --- Language ---------------------------------------------------------------------------------------

@each_page
def test_language_switcher_leads_to_the_same_page_in_the_other_language(browsed, visit, page):
    base = browsed[0]
    expected = base + url_path(Source(page.twin))
    assert visit.switched_to == expected, f"{page.rel}: the switcher led to {visit.switched_to}, not {expected}"


@each_page
def test_interface_is_in_the_page_language(visit, page):
    lang = "zh" if page.is_zh else "en"
    assert visit.lang == lang, f"{page.rel}: <html lang={visit.lang!r}>"
    shown = dict(visit.strings)
    expected = dict(STRINGS[lang])
    if not visit.blocks:  # no code block, no copy button
        del shown["copy"], expected["copy"]
    if not shown["toc"]:  # a page with no headings has no table of contents
        del shown["toc"], expected["toc"]
    assert shown == expected, f"{page.rel}: interface strings {shown}, expected {expected}"


# --- Notebooks ------------------------------------------------------------------------------------

NOTEBOOKS = [p for p in EVERY if p.path.suffix == ".ipynb"]


@pytest.mark.parametrize("page", NOTEBOOKS, ids=[p.rel for p in NOTEBOOKS])
def test_notebook_downloads_in_the_page_language_and_opens_in_colab(visit, page):
    assert visit.notebook, f"{page.rel}: the download button gave nothing"
    downloaded = json.loads(visit.notebook)
    assert downloaded == json.loads(page.path.read_text(encoding="utf-8")), (
        f"{page.rel}: the download ({visit.notebook_url}) is not this notebook"
    )
    source = page.path.relative_to(ROOT).as_posix()
    expected = f"https://colab.research.google.com/github/{REPOSITORY}/blob/main/{source}"
    assert visit.colab_url == expected, f"{page.rel}: Colab link {visit.colab_url!r}, expected {expected!r}"
