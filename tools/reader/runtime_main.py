# check_guide.py, its part on the whole check (a line per page, the summary, the command line),
# then the guide's data, which the checker writes (runtime_head.py declares it), and the entry
# point. tools/reader/checker.py joins the parts (its PARTS, in order) into that one file and leaves
# out this preamble: the names the part takes from the parts before it, for reading and linting it
# on its own.
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    import contextlib
    import io
    import logging
    import os
    import platform
    import re
    import shutil
    import sys
    import tempfile
    import time

    from tools.reader.runtime_compare import (
        DIFFERS, GATED, NOT_RUN, PASSED, VARIES, Result, _installed, _noun, _torch, release,
    )
    from tools.reader.runtime_head import GUIDE, LIBRARIES, PAGES, SITE_URL, SNIPPETS, TORCH
    from tools.reader.runtime_run import (
        TEMPORARY, keep_environment, run_distributed, run_doctest, run_scripts,
    )
# --- end of the preamble: check_guide.py goes on below ---


# --- The whole check ----------------------------------------------------------------------------

@contextlib.contextmanager
def quiet(verbose: bool):
    """What the examples print outside their captured stdout (warnings, C++ libraries writing to
    the file descriptors) goes nowhere, unless --verbose."""
    if verbose:
        yield
        return
    sys.stdout.flush(), sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1), os.dup2(sink.fileno(), 2)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                yield
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])


def import_before_tensorflow(pages: list[dict], verbose: bool) -> None:
    """Importing triton after TensorFlow crashes the process (triton 3.7, tensorflow-cpu 2.21),
    and torch._dynamo imports triton where it is installed (torch.func and torch.compile import
    torch._dynamo). So torch._dynamo goes first when a page to check imports TensorFlow."""
    needs = {lib for page in pages for name in page["snippets"] for lib in SNIPPETS[name]["needs"]}
    if "tensorflow" in needs and _installed("tensorflow"):
        with quiet(verbose):
            import torch._dynamo  # noqa: F401


def check_page(page: dict, current: tuple[int, int], verbose: bool) -> list[Result]:
    scripts = [n for n in page["snippets"] if SNIPPETS[n]["kind"] != "doctest"]
    with quiet(verbose):
        ran = run_scripts(scripts, current, verbose) if scripts else {}
        for name in page["snippets"]:
            if name not in ran:
                ran[name] = run_doctest(name, SNIPPETS[name], current)
    return [ran[name] for name in page["snippets"]]


def _needs(results: list[Result]) -> str:
    """'needs a, b (the guide uses: pip install "a==1" "b==2")' for the results not run."""
    libraries = sorted({lib for r in results if r.status == NOT_RUN for lib in r.why.split(", ")})
    pins = " ".join(f'"{LIBRARIES[lib]}"' for lib in libraries if lib in LIBRARIES)
    return f"needs {', '.join(libraries)}" + (f" (the guide uses: pip install {pins})" if pins else "")


def page_line(page: dict, results: list[Result]) -> tuple[str, str]:
    """(status, the page's line)."""
    count = lambda status: sum(r.status == status for r in results)  # noqa: E731
    examples = sum(r.examples for r in results if r.status != NOT_RUN)
    notes = []
    if count(GATED):
        notes.append("; ".join(f"{r.name}: differs as the page says ({r.why})" for r in results if r.status == GATED))
    if count(VARIES):
        notes.append("; ".join(f"{r.name}: {VARIES} ({r.why})" for r in results if r.status == VARIES))
    if count(DIFFERS):
        status = DIFFERS
        detail = f"{count(DIFFERS)} of {_noun(len(results), 'snippet')} differ: " + ", ".join(
            r.name for r in results if r.status == DIFFERS)
    elif count(NOT_RUN) == len(results):
        status = NOT_RUN
        detail = _needs(results)
    else:
        status = PASSED
        ran = len(results) - count(NOT_RUN)
        detail = f"{_noun(ran, 'snippet')}, {_noun(examples, 'example')}"
    if count(NOT_RUN) and status != NOT_RUN:
        notes.append(f"{count(NOT_RUN)} not run: " + _needs(results))
    line = f"{page['name']:<24} {status:<8} {detail}" + "".join(f" | {n}" for n in notes)
    return status, line


@contextlib.contextmanager
def own_temporary_folder():
    """The run's temporary files (tempfile's, the examples' and torch's, in this process and in
    the scripts' processes) go to a folder of the checker's own, removed at the end."""
    folder = tempfile.mkdtemp(prefix="check-guide-")
    inner = os.path.join(folder, "tmp")
    os.mkdir(inner)
    saved, environment = tempfile.tempdir, {name: os.environ.get(name) for name in TEMPORARY}
    tempfile.tempdir = inner
    os.environ.update(dict.fromkeys(TEMPORARY, inner))
    try:
        yield inner
    finally:
        tempfile.tempdir = saved
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)


def address(page: dict, name: str) -> str:
    """Where the reader sees a snippet: the page's address and the section's anchor and title."""
    section = page.get("sections", {}).get(name) or {}
    url = SITE_URL + page["url"] + (f"#{section['anchor']}" if section.get("anchor") else "")
    return url + (f' (section "{section["title"]}")' if section.get("title") else "")


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a console that cannot show a character
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")
    names = [page["name"] for page in PAGES]
    parser = argparse.ArgumentParser(
        prog="check_guide.py",
        description=f'Run the examples of "{GUIDE}" on your torch and compare their outputs with '
                    "the guide's. Exit status 0 only when every example that ran matched.")
    parser.add_argument("--page", action="append", metavar="NAME", choices=names,
                        help="check only this page (repeatable); --list shows the names")
    parser.add_argument("--diff", action="store_true",
                        help="show what differs, and where the example is on the site")
    parser.add_argument("--list", action="store_true", help="list the pages and their examples")
    parser.add_argument("--verbose", action="store_true",
                        help="let the examples' warnings and stderr through")
    parser.add_argument("--gpu", action="store_true",
                        help="let the examples see this machine's GPUs (the guide's outputs come "
                             "from machines without one, and one example prints whether CUDA is there)")
    parser.add_argument("--run-distributed", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_distributed:
        run_distributed(args.run_distributed[0], args.run_distributed[1:])
        return 0
    if args.list:
        for page in PAGES:
            print(f"{page['name']:<24} {page['title'].replace('`', '')}  ({SITE_URL}{page['url']})")
            print(" " * 25 + ", ".join(page["snippets"]))
        return 0
    pages = [p for p in PAGES if not args.page or p["name"] in args.page]
    if not args.gpu:  # before torch is imported: the examples run on the CPU, as for the guide
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    with own_temporary_folder():
        return check(pages, args)


def check(pages: list[dict], args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError:
        print("torch is not installed: install it first (pip install torch)", file=sys.stderr)
        return 2
    current = release(torch.__version__)
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # no download
    keep_environment()  # before any library an example imports can change it
    # ultralytics' one-time "Creating new Ultralytics Settings ... file" line is not the example's
    logging.getLogger("ultralytics").addFilter(
        lambda record: not record.getMessage().startswith("Creating new Ultralytics Settings"))
    print(f'Checking the examples of "{GUIDE}" on torch {torch.__version__}'
          f"{'' if args.gpu else ', CPU only'} (the guide's outputs come from torch {TORCH}): "
          f"{len(pages)} of {len(PAGES)} pages", flush=True)
    started = time.perf_counter()
    import_before_tensorflow(pages, args.verbose)
    every: list[Result] = []
    statuses = []
    differing: list[tuple[dict, Result]] = []
    for page in pages:
        results = check_page(page, current, args.verbose)
        status, line = page_line(page, results)
        print(line, flush=True)
        statuses.append(status)
        every.extend(results)
        differing += [(page, r) for r in results if args.diff and r.status in (DIFFERS, VARIES)]
    for page, result in differing:
        print(f"\n=== {page['name']}: {result.name} ({result.status})")
        print(f"on the page: {address(page, result.name)}")
        if result.note:
            print(f"the page's note: on {_torch(current)} it differs ({result.note})")
        for diff in result.diffs:
            print(diff.rstrip("\n"))
    count = lambda status: sum(r.status == status for r in every)  # noqa: E731
    print()
    print(f"torch {torch.__version__} | Python {platform.python_version()} | {platform.platform()} | "
          f"{time.perf_counter() - started:.0f} s")
    libraries = _library_versions(every)
    if libraries:
        print("with " + ", ".join(libraries))
    print(f"{_noun(len(pages), 'page')}: {statuses.count(PASSED)} passed, {statuses.count(DIFFERS)} differ, "
          f"{statuses.count(NOT_RUN)} not run. Snippets: {count(PASSED)} passed, {count(DIFFERS)} differ, "
          f"{count(GATED)} differ as their pages say, {count(NOT_RUN)} not run"
          + (f", {count(VARIES)} {'varies' if count(VARIES) == 1 else 'vary'} from run to run." if count(VARIES) else "."))
    if count(NOT_RUN):
        print(f"Not run, for a missing library: {count(NOT_RUN)} snippets; " + _needs(every) + ".")
    if count(DIFFERS):
        print(f"{_noun(count(DIFFERS), 'snippet')} printed something other than the guide shows"
              + ("." if args.diff else ": run with --diff to see what, and where on the site."))
        return 1
    print("Every example that ran printed what the guide shows"
          + (", or, where its page says it differs on this torch, what the guide recorded on it"
             if count(GATED) else "")
          + (f", except {_noun(count(VARIES), 'snippet')} whose page says its output varies from run to run"
             " on this torch." if count(VARIES) else "."))
    return 0


def _library_versions(results: list[Result]) -> list[str]:
    from importlib import metadata

    used = sorted({lib for r in results if r.status != NOT_RUN for lib in SNIPPETS[r.name]["needs"]})
    found = []
    for library in used:
        pin = LIBRARIES.get(library, "")
        distribution = re.split(r"[\[=]", pin)[0] or library
        with contextlib.suppress(metadata.PackageNotFoundError):
            found.append(f"{library} {metadata.version(distribution)}" + (f" (guide: {pin.split('==')[-1]})" if pin else ""))
    return found


# --- The guide's examples and settings, generated from its sources ------------------------------
# (runtime_head.py declares each name; `python -m tools.reader.checker` writes their values here)
# --- end of the generated data ---

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python check_guide.py --list | head`
        sys.stderr.close()
        sys.exit(0)
