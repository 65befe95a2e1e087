"""The torch version matrix: the doc-tests against every torch version the guide tracks.

    make matrix                                  # every version, one after the other
    .venv/bin/nox -s "doctests(torch='2.6.0')"   # one version
    NOX_KEEP=1 make matrix                       # keep each version's venv and uv cache
    RECORD=1 make matrix                         # first record what gated snippets print on each
                                                 # release (snippets/<page>/releases/; review the diff)
    RECORD=all make matrix                       # ... and what any snippet prints where it differs
                                                 # from its page, widening its gate (review, write why)
    MATRIX_PENDING=1 make matrix                 # only the snippets pending on each release (new or
                                                 # changed since its last run): minutes, not a quarter hour
    MATRIX_ONLY="a b" make matrix                # only these snippets (MATRIX_CHECKER=1: and the checker)
    make test-py313                              # the pins on Python 3.13 (not part of the matrix)

Each version gets a fresh uv venv with the project's pinned requirements, torch and torchvision
overridden. Every version, the pinned 2.13.0 too, runs as the build PyPI serves (the CUDA builds,
about 3 GB each), which run fine on a machine without a GPU: `make install` installs the same
build of the pin. A version's venv and uv cache are deleted after its run unless NOX_KEEP=1, so
the disk holds one at a time.

With MATRIX_PENDING=1 a version runs only the doc-tests of its pending snippets (and, with
RECORD=1, records only theirs), skips check_guide.py, and leaves build/matrix/<version>.partial
beside its JUnit file: tools.examples.compat then merges these results into the version's last
full run instead of replacing it. A version with nothing pending is not installed at all.

Results go to build/matrix/<version>.xml (JUnit), and what the reader's check_guide.py printed
on that release, once with the pins and once with torch and numpy only, to
build/matrix/<version>.checker-pins.txt and .checker-torch-numpy.txt; `python -m tools.examples.compat`
turns them into the compatibility page's data file. A failing example fails its session, and nox goes on with the
next version.

doctests_py313 runs the same doc-tests with the pins unchanged on Python 3.13, the newest that
requires-python (pyproject.toml) allows; the matrix and CI use Python 3.11. It installs PyPI's
build of the pin (about 3 GB, deleted after).
Its results go to build/python/3.13.xml, apart from the matrix's: tools.examples.compat reads build/matrix.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
RESULTS = ROOT / "build" / "matrix"
PYTHON_RESULTS = ROOT / "build" / "python"

# The reference first, then newer and older releases, each with the torchvision built for it: the
# one list in pyproject.toml ([tool.guide.torch]).
sys.path.insert(0, str(ROOT))
from tools.snippets.torch_releases import PINNED, TORCHVISION, TRACKED as TORCH_VERSIONS  # noqa: E402

# The doc-tests: every snippet and page example, the script snippets, the benchmark's relations.
DOCTESTS = ["tests/test_examples.py", "tests/test_scripts.py", "tests/test_benchmark.py"]

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = False
nox.options.sessions = ["doctests"]



def pending_names(version: str) -> list[str]:
    """The snippets with no result on `version` for what they are now (tools/snippets/results.py)."""
    sys.path.insert(0, str(ROOT))
    from tools.examples.compat import snippet_names
    from tools.snippets.results import is_pending, load

    data = load()
    return [name for name in snippet_names() if is_pending(data, version, name)]


def _run_doctests(session: nox.Session, junit: Path, torch: str | None = None,
                  torchvision: str | None = None) -> None:
    """Install the pinned requirements (torch overridden when given, with `torchvision` or the one
    listed for it) into the session's fresh uv venv and run DOCTESTS, writing JUnit to `junit`;
    then delete the venv and the uv cache."""
    only = pending_names(torch or PINNED) if os.environ.get("MATRIX_PENDING") == "1" else None
    if os.environ.get("MATRIX_ONLY"):  # these snippets only, pending or not (a gate just changed, say)
        only = os.environ["MATRIX_ONLY"].split()
    partial = junit.with_suffix(".partial")
    if only == []:
        session.skip(f"nothing is pending on torch {torch or PINNED}")
    keep = os.environ.get("NOX_KEEP") == "1"
    cache = Path(tempfile.mkdtemp(prefix="uv-cache-")) if not keep else ROOT / "build" / "uv-cache"
    session.env["UV_CACHE_DIR"] = str(cache)
    session.env["UV_LINK_MODE"] = "hardlink"  # cache and venvs share a filesystem: no copies
    if torch and tuple(int(part) for part in torch.split(".")[:2]) < (2, 5):
        # torch 2.4's torch.onnx decorates its functions with beartype whenever beartype is
        # installed (torch/onnx/_internal/_beartype.py), and the beartype TransformerLens requires
        # (0.23) rejects their string annotations at import: `import torchvision`, which imports
        # torch.onnx, raises BeartypeDecorHintPep484ForwardRefStrException. torch's own switch
        # turns the decorator off (DISABLED in _beartype.py).
        session.env["TORCH_ONNX_EXPERIMENTAL_RUNTIME_TYPE_CHECK"] = "DISABLED"
    override = []
    if torch:
        overrides = Path(session.create_tmp()) / "overrides.txt"
        overrides.write_text(f"torch=={torch}\ntorchvision=={torchvision or TORCHVISION[torch]}\n")
        override = ["--override", str(overrides)]
    try:
        # `make install`'s check: outside requires-python, one line before 3 GB are installed.
        session.run("python", str(ROOT / "tools" / "dev" / "check_python.py"),
                    "--name", f"nox's python{session.python}",
                    "--advice", f"put one in that range on PATH as python{session.python}")
        session.install("-r", "requirements-frameworks.txt", "-r", "requirements-models.txt", *override)
        # DeepSpeed apart, as `make install-deepspeed` does (requirements-deepspeed.txt says why)
        session.install("--no-deps", "--target", str(Path(session.virtualenv.location) / "deepspeed"),
                        "-r", "requirements-deepspeed.txt")
        session.run("python", "-c", "import sys, torch; print('Python', sys.version.split()[0], "
                    "'torch', torch.__version__, 'torchvision', __import__('torchvision').__version__)")
        if os.environ.get("RECORD") in ("1", "all") and torch and torch != PINNED:
            # what the gated snippets print on this release: snippets/<page>/releases/ (review the diff)
            every = ["--every"] if os.environ["RECORD"] == "all" else []
            session.run("python", "-m", "tools.examples.refresh_outputs", "--release", *every, *(only or []),
                        env={"NO_MKDOCS_2_WARNING": "1"})
        junit.parent.mkdir(parents=True, exist_ok=True)
        # the snippets as this run runs them, written first (a failing run has them too): compat
        # records these, not the files as they are when it reads the results
        session.run("python", "-c", _WRITE_DIGESTS, str(junit), torch or PINNED)
        # written before the tests, as the digests are: a failing partial run is merged too, never
        # taken for a full run
        if only:
            partial.write_text("\n".join(only) + "\n", encoding="utf-8")
        else:
            partial.unlink(missing_ok=True)
        session.run(
            "python", "-m", "pytest", *(DOCTESTS[:2] if only else DOCTESTS), "-q", "-p", "no:cacheprovider",
            f"--junitxml={junit}", *(["-k", " or ".join(only)] if only else []),
            # GUIDE_RUN_ALL: every selected example runs, none left out as unchanged (tests/unchanged.py)
            env={"NO_MKDOCS_2_WARNING": "1", "GUIDE_RUN_ALL": "1"},
            # the newest torch: failures are what its report shows, and the checker runs after them
            success_codes=[0, 1] if junit.parent == NEWEST else [0],
        )
        # the reader's check_guide.py on this release: with the pins, and with torch + numpy (after a
        # run of some snippets only too, with MATRIX_CHECKER=1: a release's first results, say)
        if torch and (not only or os.environ.get("MATRIX_CHECKER") == "1"):
            checker = Path(session.create_tmp()).resolve() / "check_guide.py"
            session.run("python", "-m", "tools.reader.checker", "--out", str(checker))
            bare = Path(session.create_tmp()).resolve() / "torch-numpy"
            uv = [sys.executable, "-m", "uv"]
            session.run(*uv, "venv", "--quiet", "--python", "3.11", str(bare), external=True)
            session.run(*uv, "pip", "install", "--quiet", "--python", str(bare / "bin" / "python"),
                        f"torch=={torch}", "numpy", external=True)
            junit.parent.mkdir(parents=True, exist_ok=True)
            session.run("python", "-c", _RUN_CHECKER, str(checker),
                        "python", str(junit.parent / f"{torch}.checker-pins.txt"),
                        str(bare / "bin" / "python"), str(junit.parent / f"{torch}.checker-torch-numpy.txt"))
    finally:
        if not keep:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(session.virtualenv.location, ignore_errors=True)


_WRITE_DIGESTS = """
import json, pathlib, sys
from tools.examples.compat import snippet_names
from tools.snippets.results import digest
junit, version = pathlib.Path(sys.argv[1]), sys.argv[2]
junit.with_suffix(".digests.json").write_text(json.dumps({n: digest(n, version) for n in snippet_names()}, indent=1) + "\\n")
"""


# Runs check_guide.py from an empty folder, as a reader who downloaded it does, under each Python
# given (both at once: one per core), and keeps what each printed and its exit status; tools.examples.compat
# puts both in results.json.
_RUN_CHECKER = """
import os, pathlib, shutil, subprocess, sys, tempfile
checker, pairs = sys.argv[1], list(zip(sys.argv[2::2], sys.argv[3::2]))
runs = []
# one intra-op thread each, as the tests run (tests/conftest.py): two runs with two threads each
# spin against each other on two cores; the outputs are the same either way
env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
for python, out in pairs:
    folder = tempfile.mkdtemp()
    python = shutil.which(python) or python
    # --diff: what differs, and where on the site, is in build/matrix/<version>.checker-*.txt
    runs.append((subprocess.Popen([python, checker, "--diff"], cwd=folder, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env), pathlib.Path(out), folder))
for process, out, folder in runs:
    stdout, stderr = process.communicate()
    shutil.rmtree(folder, ignore_errors=True)
    out.write_text(stdout + stderr[-3000:] + f"exit status {process.returncode}\\n", encoding="utf-8")
    print(out.name, stdout.strip().splitlines()[-2:], "exit status", process.returncode)
"""


@nox.session(python="3.11")
@nox.parametrize("torch", TORCH_VERSIONS)
def doctests(session: nox.Session, torch: str) -> None:
    _run_doctests(session, RESULTS / f"{torch}.xml", torch)


# The newest torch on the package index, before anyone tracks it (.github/workflows/newest-torch.yml):
# NEWEST_TORCH and NEWEST_TORCHVISION come from `python -m tools.examples.newest_torch resolve`. Results go
# to build/newest/, apart from the matrix's, so that tools.examples.compat never takes them for a
# tracked release's; `python -m tools.examples.newest_torch report` says what differs there.
NEWEST = ROOT / "build" / "newest"


@nox.session(python="3.11")
def newest(session: nox.Session) -> None:
    torch, torchvision = os.environ.get("NEWEST_TORCH"), os.environ.get("NEWEST_TORCHVISION")
    if not (torch and torchvision):
        session.error("set NEWEST_TORCH and NEWEST_TORCHVISION (python -m tools.examples.newest_torch resolve)")
    _run_doctests(session, NEWEST / f"{torch}.xml", torch, torchvision)


# Releases older than the matrix, run only to record what the snippets whose gate names them in
# `differs_on` print there (tools/snippets/releases.py, OLDER): the older wordings of error
# messages. Torch, numpy (torch 2.0 and 1.13 were built against numpy 1.x) and the two libraries
# the recorder needs, pinned as requirements.txt pins them; then the venv and its cache are deleted.
OLDER_NUMPY = {"2.0.1": "1.26.4", "1.13.1": "1.26.4"}


@nox.session(python="3.11")
@nox.parametrize("torch", list(OLDER_NUMPY))
def recordings(session: nox.Session, torch: str) -> None:
    import re

    sys.path.insert(0, str(ROOT))
    from tools.snippets import releases, version_gates

    names = sorted(name for name, gate in version_gates().items() if releases.names_release(gate, torch))
    if not names:
        session.skip(f"no gate in snippets/versions.toml names torch {torch}")
    pins = re.findall(r"^((?:pytest|sybil)==\S+)", (ROOT / "requirements.txt").read_text(), re.MULTILINE)
    cache = Path(tempfile.mkdtemp(prefix="uv-cache-"))
    session.env.update(UV_CACHE_DIR=str(cache), UV_LINK_MODE="hardlink")
    try:
        session.install(f"torch=={torch}", f"numpy=={OLDER_NUMPY[torch]}", *pins)
        session.run("python", "-m", "tools.examples.refresh_outputs", "--release", *names,
                    env={"NO_MKDOCS_2_WARNING": "1"})
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(session.virtualenv.location, ignore_errors=True)


# Not in nox.options.sessions: `make matrix` stays the torch matrix; `make test-py313` runs this.
@nox.session(python="3.13")
def doctests_py313(session: nox.Session) -> None:
    _run_doctests(session, PYTHON_RESULTS / "3.13.xml")
