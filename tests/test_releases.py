"""What gated snippets print on other torch releases (snippets/<folder>/releases/, tools/snippets/releases.py):
every release a gate excludes has its recorded output, recorded from the snippet's own code, and
the comparison on such a release fails on a changed line or a crash, as it does on the pin."""

import re
import subprocess

import pytest

from tools.examples import compat
from tools.snippets import releases, results
from tools.examples.evaluate import module_globals, release_problems, release_script_problems
from tools.snippets import ROOT, SNIPPETS, Snippet, find, rel, script_paths, source, version_gates

GATES = version_gates()
RESULTS = results.load()
RECORDED = releases.recorded()
# The matrix's releases, and the older ones a gate names (recorded by `make recordings`)
NEEDED = [(name, version) for name, gate in sorted(GATES.items()) for version in compat.VERSIONS
          if gate.excludes(releases.release(version)) and not gate.warns_on(releases.release(version))] + [
          (name, version) for name, gate in sorted(GATES.items()) for version in releases.OLDER
          if releases.names_release(gate, version) and not gate.warns_on(releases.release(version))]


def _kind(name: str) -> str:
    return "text" if find(name, ".py") else "pycon"


@pytest.mark.parametrize("name, version", NEEDED, ids=[f"{n}-{v}" for n, v in NEEDED])
def test_every_excluded_release_has_its_recorded_output(name, version):
    """Recorded by the matrix: until it has run the snippet as it is now on that release, the
    snippet is pending there (its page says so), and the recording comes with that run. A release
    older than the matrix's is never pending: `make recordings` records it."""
    section = releases.for_release(name, version)
    older = version in releases.OLDER
    if section is None and not older and results.is_pending(RESULTS, version, name):
        pytest.skip(f"{name} is pending the matrix on torch {version} (its page says so): its next run records it")
    command = ("`make recordings` (the nox session recordings)" if older else
               "`RECORD=1 make matrix` (or that release's nox session with RECORD=1)")
    assert section is not None, (
        f"snippets/versions.toml says {rel(source(name))} prints something else on torch {version}, and "
        f"{rel(releases.path(name))} records no output for it: run {command} and review the diff"
    )
    assert section.kind == _kind(name), f"{rel(releases.path(name))}: a {section.kind} block for a {_kind(name)} snippet"


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_recorded_outputs_belong_to_a_gate_and_its_releases(path):
    gate = GATES.get(path.stem)
    assert gate is not None and (not gate.warns or gate.differs_on), (
        f"{path.relative_to(ROOT)}: no gate in snippets/versions.toml says {path.stem} prints something "
        "else anywhere: delete the file"
    )
    for section in releases.parse(path.read_text(encoding="utf-8")):
        kept = [v for v in section.releases if not gate.excludes(releases.release(v))]
        assert not kept, (f"{path.relative_to(ROOT)} records torch {', '.join(kept)}, where the page's "
                          "output holds (snippets/versions.toml): delete that release from it")


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_recorded_transcripts_hold_the_snippets_own_code(path):
    """A transcript recorded from other code would compare another example on that release."""
    if find(path.stem, ".py"):
        return
    page = [e.source for e in Snippet.load(find(path.stem)).examples()]
    for section in releases.parse(path.read_text(encoding="utf-8")):
        recorded = [e.source for e in section.examples()]
        assert recorded == page[: len(recorded)], (
            f"{path.relative_to(ROOT)} (torch {', '.join(section.releases)}) was recorded from other code "
            f"than {rel(find(path.stem))} holds: record it again (`RECORD=1 make matrix`)"
        )
        if len(recorded) < len(page):
            assert section.examples()[-1].exc_msg is not None, (
                f"{path.relative_to(ROOT)} (torch {', '.join(section.releases)}) stops before the "
                "snippet's end without an exception")


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_recorded_outputs_elide_only_addresses_and_paths(path):
    text = path.read_text(encoding="utf-8")
    # addresses (in hex, or an id() in decimal), paths, and torch's own repr of a fake tensor ("FakeTensor(..., size=(2,))")
    for rule in (r"\b0x\.\.\.", r"\(\.\.\.\)is not tracked", r"\(Triggered internally at\.\.\.\)", r"(?<![\w.])\.\.\.(?=\w[^\s]*\.py\b)",
                 r"FakeTensor\(\.\.\.,", r'File "\.\.\.", line',
                 r"\d,  \.\.\.,  -?\d"):  # torch's summarised repr of a long tensor in a message
        text = re.sub(rule, "", text)
    body = "".join(s.output() for s in releases.parse(text))
    # a line the pinned run printed too, where torch's own message holds "..." ("out=... arguments")
    pinned = source(path.stem)
    pinned_text = (pinned.with_suffix(".out") if pinned.suffix == ".py" else pinned).read_text(encoding="utf-8")
    printed = {line.strip() for line in pinned_text.splitlines() if line.strip() != "..."}
    body = "".join(line for line in body.splitlines(keepends=True) if line.strip() not in printed)
    # a "..." the snippet's code prints itself, inside a string literal (`grad_norm(...)`)
    code = source(path.stem).read_text(encoding="utf-8")
    for literal in set(re.findall(r"[\w.]*\(\.\.\.\)", code)):
        body = body.replace(literal, "")
    # or a whole string literal of its code that holds one ("torch.mul(..., out=...) on ...")
    for quoted in set(re.findall(r'"([^"\n]*\.\.\.[^"\n]*)"', code)):
        if re.search(r"\w", quoted.replace("...", "")):
            body = body.replace(quoted, "")
    lines = [line for line in body.splitlines() if "..." in line and line.strip() != "..."]
    assert not lines, f"{path.relative_to(ROOT)}: '...' stands for something other than an address or a path: {lines}"


# --- The comparison can fail ------------------------------------------------------------------

DOCTEST = "autograd_grad_allow_unused"  # a gated doctest snippet


def _pinned_section(name: str) -> releases.Section:
    snippet = Snippet.load(find(name))
    return releases.Section(["2.13.0"], "pycon", snippet.fence["body"])


def _compare(monkeypatch, name: str, section: releases.Section | None) -> str | None:
    monkeypatch.setattr(releases, "for_release", lambda n, v: section if n == name else None)
    return release_problems(find(name), "2.13.0", module_globals(f"releases_{name}"))


def test_a_release_that_prints_its_recorded_output_passes(monkeypatch):
    assert _compare(monkeypatch, DOCTEST, _pinned_section(DOCTEST)) is None


def test_a_changed_line_of_a_recorded_output_fails(monkeypatch):
    section = _pinned_section(DOCTEST)
    section.body = section.body.replace("(tensor([1.]), tensor([0.]))", "(tensor([1.]), tensor([0.], requires_grad=True))")
    problem = _compare(monkeypatch, DOCTEST, section)
    assert problem and "releases/" in problem and "printed something other than snippets/" in problem, problem
    assert "requires_grad=True" in problem


def test_no_recorded_output_fails_naming_the_command(monkeypatch):
    problem = _compare(monkeypatch, DOCTEST, None)
    assert problem and "has no output recorded" in problem and "--release" in problem, problem


def test_a_transcript_recorded_from_other_code_fails(monkeypatch):
    section = _pinned_section(DOCTEST)
    section.body = section.body.replace("print(torch.autograd.grad(a, (u, z), materialize_grads=True))",
                                        "print(torch.autograd.grad(a, (u, z), materialize_grads=True)[2])")
    problem = _compare(monkeypatch, DOCTEST, section)  # recorded from other code
    assert problem and "recorded from other code" in problem, problem


def test_a_recorded_exception_ends_the_run_and_only_it_passes(monkeypatch, tmp_path):
    snippet = tmp_path / "ends_early.md"
    snippet.write_text('```pycon title="ends_early"\n>>> print(1)\n1\n>>> {}["key"]\n>>> print(2)\n2\n```\n')
    recorded = releases.Section(["2.13.0"], "pycon", '>>> print(1)\n1\n>>> {}["key"]\nTraceback (most recent call last):\n  ...\nKeyError: \'key\'\n')
    other = releases.Section(["2.13.0"], "pycon", '>>> print(1)\n1\n>>> {}["key"]\nTraceback (most recent call last):\n  ...\nKeyError: \'other\'\n')
    monkeypatch.setattr(releases, "for_release", lambda n, v: recorded)
    assert release_problems(snippet, "2.13.0", module_globals("ends_early_a")) is None
    monkeypatch.setattr(releases, "for_release", lambda n, v: other)
    problem = release_problems(snippet, "2.13.0", module_globals("ends_early_b"))
    assert problem and "raised, which snippets/shared/releases/ends_early.md does not record" in problem, problem


def test_a_crash_is_never_a_recorded_difference(monkeypatch, tmp_path):
    """The release's recorded output ran on; a run that raises there fails, naming the line."""
    snippet = tmp_path / "crashes.md"
    snippet.write_text('```pycon title="crashes"\n>>> print(1)\n1\n>>> _ = {}["key"]\n>>> print(2)\n2\n```\n')
    recorded = releases.Section(["2.13.0"], "pycon", '>>> print(1)\n1\n>>> _ = {}["key"]\n>>> print(2)\n2\n')
    monkeypatch.setattr(releases, "for_release", lambda n, v: recorded)
    problem = release_problems(snippet, "2.13.0", module_globals("crashes"))
    assert problem and "crashes.md:4 on torch 2.13.0 raised" in problem and "KeyError" in problem, problem


def test_a_script_compares_its_whole_output_and_exit(monkeypatch):
    script = next(p for p in script_paths() if p.stem == "ddp_intermediate_grads")
    expected = script.with_suffix(".out").read_text(encoding="utf-8")
    section = releases.Section(["2.13.0"], "text", expected)
    monkeypatch.setattr(releases, "for_release", lambda n, v: section)
    ran = subprocess.CompletedProcess([], 0, expected, "")
    assert release_script_problems(script, "2.13.0", ran) is None
    crashed = subprocess.CompletedProcess([], 1, expected, "Traceback ...\nRuntimeError: Numpy is not available\n")
    problem = release_script_problems(script, "2.13.0", crashed)
    assert problem and "+[failed] RuntimeError: Numpy is not available" in problem, problem
    changed = subprocess.CompletedProcess([], 0, expected.replace("0.", "1.", 1), "")
    assert release_script_problems(script, "2.13.0", changed)


def test_the_compatibility_page_shows_each_recorded_difference():
    rows = (SNIPPETS / "compatibility" / "differences.md").read_text(encoding="utf-8")
    for path in RECORDED:
        for section in releases.parse(path.read_text(encoding="utf-8")):
            assert f"`{path.stem}`" in rows and f"torch {', '.join(section.releases)}" in rows, (
                f"snippets/compatibility/differences.md does not show {path.stem} on torch "
                f"{', '.join(section.releases)}: run `python -m tools.examples.compat`")


# --- Page notes that quote another release's output -------------------------------------------

NOTE = re.compile(r'^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?) note "(?P<title>[^"]*)"\n(?P<body>(?:(?P=indent)[ \t]+.*\n|[ \t]*\n)+)',
                  re.MULTILINE)
QUOTE = re.compile(r"``(?P<double>.+?)``|`(?P<single>[^`]+)`", re.DOTALL)
INCLUDE = re.compile(r'^--8<-- "(?:[^"\n]*/)?(?P<name>[^"/]+)\.(?:md|py)"', re.MULTILINE)
PAGES = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name not in {"compatibility.md", "compatibility.zh.md"}]


def _quoted_output(span: str) -> bool:
    """A quoted message: an exception or warning line, or a printed line with words in it."""
    return bool(re.match(r"^[\w.]*(Error|Exception|Warning|Unsupported)\b.*:", span)) or (
        span.count(" ") >= 4 and not re.match(r"^[\w.]+\(", span) and "=" not in span.split(" ")[0])


def _normal(text: str) -> str:
    return " ".join(text.split())


NOTES = []
for _page in PAGES:
    _text = _page.read_text(encoding="utf-8")
    for _note in NOTE.finditer(_text):
        _after = _text[_note.end():]
        _next = INCLUDE.search(_after)
        if _next and releases.load(_next["name"]) and re.search(r"\d\.\d", _note["title"]):
            NOTES.append(pytest.param(_page, _note["body"], _next["name"],
                                      id=f"{_page.relative_to(ROOT / 'docs')}:{_text[:_note.start()].count(chr(10)) + 1}"))


def test_the_version_notes_are_found():
    """An empty list would skip the test below instead of failing it."""
    assert len(NOTES) >= 5, f"found {len(NOTES)} version notes above gated snippets: has the include syntax changed?"


@pytest.mark.parametrize("page, body, name", NOTES)
def test_a_version_note_quotes_what_the_release_printed(page, body, name):
    """A note above a gated snippet that quotes another release's message quotes it as that
    release printed it (<folder>/releases/<name>.md), in both languages."""
    printed = _normal("".join(s.output() for s in releases.load(name)))
    quotes = [_normal(m["double"] or m["single"]).strip("…").strip() for m in QUOTE.finditer(body)]
    wrong = [q for q in quotes if _quoted_output(q) and q not in printed]  # "…" marks a fragment
    assert not wrong, (
        f"{page.relative_to(ROOT)}: the note above {name} quotes {wrong}, which no recorded release "
        f"output of {rel(releases.path(name))} contains: quote the line as that release printed it"
    )


def test_a_run_that_differs_where_the_page_says_it_varies_is_an_expected_failure(monkeypatch):
    """varies_on: reported as xfailed (tools.examples.compat then marks that release ✗), never as passed;
    anywhere else the same difference is a plain failure."""
    from tests import test_examples
    from tools.snippets import Gate, torch_release

    here = ".".join(map(str, torch_release()))
    monkeypatch.setitem(test_examples.GATES, "made_up", Gate("made_up", "a reason", since="1.0", varies_on=(here,)))
    with pytest.raises(pytest.xfail.Exception, match="varies from run to run"):
        test_examples._varies("made_up", "printed 1024")
    monkeypatch.setitem(test_examples.GATES, "made_up", Gate("made_up", "a reason", since="1.0", varies_on=("99.0",)))
    assert test_examples._varies("made_up", "printed 1024") is None  # the caller then fails


def test_a_warning_gate_compares_its_differs_on_releases_with_their_recordings():
    """`warns` covers the releases since/before exclude (the page's output, with torch's warning
    beside it); a release also in differs_on printed something else and is compared with its
    recording (the reader's checker: tests/test_checker_compares.py)."""
    from tools.snippets import Gate

    gate = Gate("made_up", "a reason", before="2.14", differs_on=("2.9",), warns="is deprecated")
    for release, warns, excluded in (((2, 15), True, True), ((2, 9), False, True), ((2, 12), False, False)):
        assert gate.excludes(release) is excluded, release
        assert gate.warns_on(release) is warns, release
