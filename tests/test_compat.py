"""The compatibility page: its data covers every snippet, its tables are drawn from the data, and
every version difference a snippet declares is shown on the pages that include it."""

import json
import re

import pytest

from tools.snippets.torch_releases import PINNED
from tools.examples import compat
from tools.snippets import DOCS, ROOT, results, version_gates

# the committed results, not build/matrix: what the page shows
DATA = json.loads(compat.DATA.read_text(encoding="utf-8")) if compat.DATA.exists() else None
GATES = version_gates()


def test_there_are_results():
    assert DATA and DATA["versions"], "snippets/compatibility/results.json is missing: run `make matrix`"
    assert DATA["versions"][0] == PINNED, "the pinned release must be in the results, first"


def test_the_data_covers_every_snippet_or_marks_it_pending():
    """A snippet the matrix has not run as it is now is pending, never counted as passed."""
    for version in DATA["versions"]:
        run = DATA["runs"][version]
        for name in compat.snippet_names():
            if name not in run["ran"] or run.get("digests", {}).get(name) != results.digest(name, version):
                assert compat.status(DATA, version, name) == "…", f"{name} on torch {version}"


def _changed(data: dict, name: str, versions: list[str]) -> dict:
    """The results as if the matrix had just run every snippet as it is now (so nothing else is
    pending: a contributor's own new example may be), and `name` had changed since on `versions`."""
    copy = json.loads(json.dumps(data))
    names = compat.snippet_names()
    for version in copy["versions"]:
        run = copy["runs"][version]
        run["ran"] = sorted(set(run["ran"]) | set(names))
        run["digests"] = {n: results.digest(n, version) for n in names}
    for version in versions:
        copy["runs"][version]["digests"][name] = "0" * 16
    return copy


def test_a_changed_snippet_is_pending_and_its_page_vouches_for_the_pinned_release_only():
    page = "techniques/register-hook.md"
    name = sorted(n for n in compat.snippet_names() if page in compat.pages_including(n))[0]
    entry = compat.verified(_changed(DATA, name, DATA["versions"][1:]))[page]
    assert entry["pending"] == [name] and entry["pinned"] == DATA["versions"][0], entry
    assert name not in entry["examples"], "a pending example has no range of its own"
    assert compat.status(_changed(DATA, name, ["2.9.1"]), "2.9.1", name) == "…"
    everything = compat.verified(_changed(DATA, name, ["2.9.1"]))["index.md"]
    assert everything["pending"] == [name] and everything["guide"] == len(compat.snippet_names())


def test_a_page_date_moves_only_when_its_results_change():
    fresh = _changed(DATA, "", [])
    stored = compat.verified(fresh)
    moved = json.loads(json.dumps(fresh))
    for run in moved["runs"].values():
        run["date"] = "2099-01-01"  # a new run of every release that changes nothing
    assert compat.verified(moved, previous=stored) == stored
    page = "techniques/register-hook.md"
    name = sorted(n for n in compat.snippet_names() if page in compat.pages_including(n))[0]
    after = compat.verified(_changed(moved, name, DATA["versions"][1:]), previous=stored)
    assert after[page]["date"] != stored[page]["date"], "a page whose results changed keeps its old date"
    assert after["checkpointing.md"]["date"] == stored["checkpointing.md"]["date"]


def test_the_pinned_release_passes_everything():
    """What the pin's last run printed otherwise belongs to snippets that changed since (pending):
    after `make upgrade` the new pin's recorded differences became the pages' outputs."""
    run = DATA["runs"][PINNED]
    current = [name for name in {**run["failed"], **run.get("gated", {})}
               if not results.is_pending(DATA, PINNED, name)]
    assert not current, {name: {**run["failed"], **run.get("gated", {})}[name] for name in current}


def test_tables_are_drawn_from_the_data():
    for path, content in compat.render(DATA).items():
        assert path.read_text(encoding="utf-8") == content, (
            f"{path.relative_to(ROOT)} is not what results.json gives: run `python -m tools.examples.compat`"
        )


@pytest.mark.parametrize("page", ["compatibility.md", "compatibility.zh.md"])
def test_page_columns_are_the_measured_releases(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    stored = DATA
    for header in re.findall(r"^\s*\|[^|\n]+\|(?:[^|\n]+\|)? 2\.13\.0 \|.*$", text, re.MULTILINE):
        columns = [cell.strip() for cell in header.strip().strip("|").split("|")]
        releases = [c for c in columns if re.fullmatch(r"\d+\.\d+\.\d+", c)]
        assert releases == stored["versions"], f"docs/{page}: columns {releases} != results {stored['versions']}"


def _include(name: str, text: str) -> str | None:
    """The include line of snippets/<name>.md (doctests) or <name>.py (scripts) on a page."""
    found = re.search(rf'^--8<-- "(?:[^"\n]*/)?{re.escape(name)}\.(?:md|py)"', text, re.MULTILINE)
    return found[0] if found else None


_PAGE_TEXTS = {page: page.read_text(encoding="utf-8") for page in sorted(DOCS.rglob("*.md"))}
# Each page's included snippet names, read once (a search per gate and page cost 3 s of collection).
_INCLUDED = {page: set(re.findall(r'^--8<-- "(?:[^"\n]*/)?([^"/\n]+)\.(?:md|py)"', text, re.MULTILINE))
             for page, text in _PAGE_TEXTS.items()}
GATED_INCLUDES = [(name, page) for name in GATES for page in _PAGE_TEXTS if name in _INCLUDED[page]]


@pytest.mark.parametrize("name, page", GATED_INCLUDES,
                         ids=[f"{n}-{p.relative_to(DOCS)}" for n, p in GATED_INCLUDES])
def test_version_differences_are_shown_next_to_the_snippet(name, page):
    """snippets/versions.toml: the section that includes the snippet names the release, or the
    page's introduction does (before its first `##`), for a difference that holds for every
    example of the page (a library that needs a newer torch)."""
    gate = GATES[name]
    text = page.read_text(encoding="utf-8")
    before = text[: text.index(_include(name, text))]
    section = before[before.rfind("\n## ") :] + text[: text.find("\n## ")]
    first, *others = gate.releases  # "torch 2.11 and 2.12" names both
    missing = [f"torch {first}"] if f"torch {first}" not in section else []
    missing += [release for release in others if not re.search(rf"\b{re.escape(release)}\b", section)]
    assert not missing, (
        f"{page.relative_to(ROOT)}: the section before {name} does not mention "
        + ", ".join(missing) + f" ({gate.label}: {gate.why})"
    )


def test_every_gate_names_an_existing_snippet():
    unknown = set(GATES) - set(compat.snippet_names())
    assert not unknown, f"snippets/versions.toml names snippets that do not exist: {sorted(unknown)}"


def test_the_readers_checker_exits_0_on_every_release():
    """noxfile.py runs check_guide.py on each release, with the pins and with torch + numpy only."""
    for version in DATA["versions"]:
        checks = DATA["runs"][version].get("checker", {})
        assert set(checks) == set(compat.CHECKER_RUNS), (
            f"results.json has no check_guide.py run ({', '.join(sorted(set(compat.CHECKER_RUNS) - set(checks)))}) "
            f"for torch {version}: run `make matrix`")
        for label, check in checks.items():
            assert check["exit"] == 0 and check.get("differ") == 0, (
                f"check_guide.py with {compat.CHECKER_RUNS[label]} on torch {version}: {check} "
                f"(build/matrix/{version}.checker-{label}.txt)")


def test_a_run_reads_recorded_differences_and_varying_runs(tmp_path):
    """A gated example that printed its release's recorded output is ≠; one whose page says it
    varies from run to run and that differed in this run is ✗ for this run; a failure is ✗."""
    cases = {
        "snippets/a.md (differs on torch 2.9.1: snippets/releases/a.md)": "",
        "snippets/b.md (may warn outside torch 2.13+)":
            '<skipped type="pytest.xfail" message="varies from run to run on torch 2.9.1 (snippets/versions.toml): x"/>',
        "snippets/c.md (differs on torch 2.9.1: snippets/releases/c.md)": '<failure message="printed other"/>',
    }
    body = "".join(f'<testcase classname="tests.test_examples" name="test_example[{name}]">{inner}</testcase>'
                   for name, inner in cases.items())
    junit = tmp_path / "run.xml"
    junit.write_text(f'<testsuites><testsuite timestamp="2026-11-26T00:00:00" time="1" tests="3">{body}'
                     "</testsuite></testsuites>", encoding="utf-8")
    run = compat.read_run(junit)
    assert list(run["gated"]) == ["a"], run
    assert sorted(run["failed"]) == ["b", "c"], run
    assert run["failed"]["b"].startswith("varies from run to run"), run


def test_a_run_records_the_digests_it_ran_not_the_files_as_they_are_now(tmp_path):
    """The nox session writes <version>.digests.json before its tests: a snippet edited between
    the run and `python -m tools.examples.compat` must stay pending, not look as if it ran."""
    name = compat.snippet_names()[0]
    junit = tmp_path / "2.9.1.xml"
    junit.write_text('<testsuites><testsuite timestamp="2026-11-26T00:00:00" time="1" tests="1">'
                     f'<testcase classname="tests.test_examples" name="test_example[snippets/x/{name}.md:3]"/>'
                     "</testsuite></testsuites>", encoding="utf-8")
    assert compat.read_run(junit)["digests"] == {name: results.digest(name, "2.9.1")}  # no file: as now
    junit.with_suffix(".digests.json").write_text(json.dumps({name: "as-it-ran"}), encoding="utf-8")
    assert compat.read_run(junit)["digests"] == {name: "as-it-ran"}


def test_a_partial_run_replaces_only_what_it_ran():
    """MATRIX_PENDING=1 runs the pending snippets only (noxfile.py): merged into the release's
    last full run, they replace their own results, and every other snippet keeps its own."""
    previous = {"date": "2026-11-20", "seconds": 300, "tests": 9, "checker": {"pins": {"exit": 0}},
                "failed": {"a": "a:3: old failure", "b": "b:4: still failing"}, "gated": {"c": "differs"},
                "ran": ["a", "b", "c", "d"], "digests": {"a": "a1", "b": "b1", "c": "c1", "d": "d1"}}
    partial = {"date": "2026-11-26", "seconds": 20, "tests": 2, "failed": {}, "gated": {"e": "differs"},
               "ran": ["a", "e"], "digests": {"a": "a2", "e": "e1"}}
    merged = compat.merge_partial(previous, partial)
    assert merged["failed"] == {"b": "b:4: still failing"}
    assert merged["gated"] == {"c": "differs", "e": "differs"}
    assert merged["ran"] == ["a", "b", "c", "d", "e"]
    assert merged["digests"] == {"a": "a2", "b": "b1", "c": "c1", "d": "d1", "e": "e1"}
    assert (merged["date"], merged["tests"], merged["checker"]) == ("2026-11-20", 9, {"pins": {"exit": 0}})


def test_every_gate_says_why():
    """`make upgrade` and RECORD=all write a placeholder `why` for the maintainer to replace."""
    unsaid = sorted(name for name, gate in GATES.items() if "say why" in gate.why or not gate.why.strip())
    assert not unsaid, f"snippets/versions.toml: write the `why` of {', '.join(unsaid)}"
