"""Move the guide to another torch release: the mechanical part of an upgrade, then the review list.

    make upgrade TORCH=2.15.0                    # a tracked release (pyproject.toml lists it)
    make upgrade TORCH=2.16.0 TORCHVISION=0.30.0 # a new one: tracked first, then the matrix runs it
    python -m tools.examples.upgrade --review         # print the last review list again

In order, each step a command a maintainer could run by hand:
1. A release the one list (pyproject.toml, [tool.guide.torch]) does not track yet is added to it
   with its torchvision, and the matrix runs it, recording what gated snippets print there
   (RECORD=1 nox -s "doctests(torch='X')", then tools.examples.compat). Its failures are the
   examples to look at first: the upgrade stops there.
2. Gates (snippets/versions.toml) that exclude the new pin are turned around, from the recordings
   the matrix made on it: the new pin's recorded output becomes the page's; the old page output
   becomes a recording on the releases that printed it; since/before/differs_on name the releases
   the new output holds on. Their `why` is left for the maintainer (the review list names them).
3. The pins move: pyproject.toml, requirements.txt, requirements-models.txt (torchvision too).
4. .venv installs them (make install install-frameworks install-models install-deepspeed).
5. Every output is rewritten from a real run on the new pin (tools.examples.refresh_outputs).
   Where an ungated example now prints something else, the old pin's output is recorded as what
   the old pin prints (snippets/<page>/releases/), with a gate `differs_on` the old pin: the
   matrix's next run checks every other release against the new output.
6. The generated files: the compatibility data (compat --stored), notebooks, figures, Questions.
7. The review list (build/upgrade/review.md, printed): each example whose output changed, its
   changed lines, and the lines of prose in both languages that quote a changed line or name the
   old pin.

The cost page is measured apart (`make benchmark`): timings need an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tools.snippets import releases
from tools.snippets.gates import VERSION_GATES, version_gates
from tools.snippets.model import DOCS, ROOT, SNIPPETS, Snippet, find, script_paths, snippet_paths
from tools.snippets.torch_releases import PYPROJECT, key, read

REVIEW = ROOT / "build" / "upgrade" / "review.md"
# What the upgrade found before it changed anything: a run that stopped (a snippet that raises on the
# new release, say) goes on from the install when `make upgrade` is run again with the same release.
STATE = ROOT / "build" / "upgrade" / "state.json"
BIN = ROOT / ".venv" / "bin"
INSTALL = ["install", "install-frameworks", "install-models", "install-deepspeed"]


def run(*command: str, **env: str) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, **env})


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


# --- 1. the one list ---------------------------------------------------------------------------

def track(version: str, torchvision: str) -> None:
    """Add `version` with its torchvision to pyproject.toml's [tool.guide.torch.torchvision]."""
    text = PYPROJECT.read_text(encoding="utf-8")
    table = "[tool.guide.torch.torchvision]"
    start = text.index(table)
    line_end = text.index("\n", start) + 1
    text = text[:line_end] + f'"{version}" = "{torchvision}"\n' + text[line_end:]
    PYPROJECT.write_text(text, encoding="utf-8")


def set_pin(version: str) -> None:
    text = PYPROJECT.read_text(encoding="utf-8")
    text, count = re.subn(r'(?m)^(pinned = ")[^"]+(")', rf"\g<1>{version}\g<2>", text)
    assert count == 1, "pyproject.toml: no `pinned = ...` under [tool.guide.torch]"
    PYPROJECT.write_text(text, encoding="utf-8")


def move_requirements(old: str, new: str, torchvision: dict[str, str]) -> None:
    """torch==, torchvision== and the comments beside them that name the old pin."""
    for name, package, version in (("requirements.txt", "torch", new),
                                   ("requirements-models.txt", "torchvision", torchvision[new])):
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        text, count = re.subn(rf"(?m)^({package}==)\S+", rf"\g<1>{version}", text)
        assert count == 1, f"{name}: no {package}== pin"
        text = text.replace(f"torch {old}", f"torch {new}")
        path.write_text(text, encoding="utf-8")


# --- 2. gates turned around --------------------------------------------------------------------

def main_output(name: str) -> tuple[str, str]:
    """(kind, body) of the page's output as a recording holds it: the fence's body, or the .out."""
    md = find(name, ".md")
    if md is not None:
        return "pycon", Snippet.load(md).fence["body"]
    return "text", find(name, ".out").read_text(encoding="utf-8")


def gate_fields(holds: list[str], known: list[str]) -> dict[str, object]:
    """since/before/differs_on (minor releases) under which a snippet holds on `holds` among `known`."""
    hold = sorted({minor(v) for v in holds}, key=key)
    every = sorted({minor(v) for v in known} | set(hold), key=key)
    low, high = hold[0], hold[-1]
    fields: dict[str, object] = {}
    if every[0] != low:
        fields["since"] = low
    above = [v for v in every if key(v) > key(high)]
    if above:
        fields["before"] = above[0]
    between = [v for v in every if key(low) <= key(v) <= key(high) and v not in hold]
    if between:
        fields["differs_on"] = between
    return fields


def write_gate(name: str, fields: dict[str, object], note: str) -> None:
    """Replace since/before/differs_on of [name] in snippets/versions.toml (or add the table)."""
    text = VERSION_GATES.read_text(encoding="utf-8")
    lines = []
    for field, value in fields.items():
        shown = "[" + ", ".join(f'"{v}"' for v in value) + "]" if isinstance(value, list) else f'"{value}"'
        lines.append(f"{field} = {shown}\n")
    block = re.search(rf"(?ms)^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text)
    if block is None:
        text = text.rstrip("\n") + f"\n\n[{name}]\n{''.join(lines)}why = \"{note}\"\n"
    else:
        kept = [line for line in block[1].splitlines(keepends=True)
                if not re.match(r"(since|before|differs_on) =", line)]
        text = text[: block.start(1)] + "".join(lines) + "".join(kept) + text[block.end(1):]
    VERSION_GATES.write_text(text, encoding="utf-8")


def widen_gate(name: str, version: str) -> None:
    """Gate `name` off `version` too (RECORD=all recorded a difference there), keeping its other
    fields; the releases named only for their recordings (OLDER) stay named."""
    from tools.snippets.torch_releases import TRACKED

    gate = version_gates().get(name)
    if gate is not None and gate.warns:
        # since/before mark where the page's output holds with the warning beside it (warns_on):
        # recomputing them from the releases that hold would make every other excluded release
        # a "holds with the warning" one. The new difference is named on its own.
        fields = {field: value for field, value in (("since", gate.since), ("before", gate.before)) if value}
        fields["differs_on"] = sorted({*gate.differs_on, minor(version)}, key=key)
        write_gate(name, fields, "")
        return
    excluded = {v for v in TRACKED if gate is not None and gate.excludes(releases.release(v))} | {version}
    holds = [v for v in TRACKED if v not in excluded]
    fields = gate_fields(holds, TRACKED)
    older = [d for d in (gate.differs_on if gate else ()) if d not in {minor(v) for v in TRACKED}]
    if older:
        fields["differs_on"] = sorted({*fields.get("differs_on", []), *older}, key=key)
    write_gate(name, fields, f"recorded on torch {version} by RECORD=all make matrix: say why")


def turn_gates(old: str, new: str, tracked: list[str]) -> list[str]:
    """Gates that exclude the new pin: its recording becomes the page's output. Returns their names."""
    turned = []
    for name, gate in version_gates().items():
        if gate.warns_on(releases.release(new)) or not gate.excludes(releases.release(new)) or (find(name) or find(name, ".py")) is None:
            continue
        sections = releases.load(name)
        mine = next((s for s in sections if s.holds_on(new)), None)
        if mine is None:
            sys.exit(f"{name}: its gate excludes torch {new}, and nothing is recorded for it there: "
                     f"run the matrix on {new} with RECORD=1 first")
        kind, body = main_output(name)
        old_holds = [v for v in tracked if not gate.excludes(releases.release(v))]
        rest = [s for s in sections if s is not mine]
        file = (find(name, ".md") or find(name, ".py")).relative_to(SNIPPETS).as_posix()
        releases._write(name, file, rest + ([releases.Section(old_holds, kind, body)] if old_holds else []))
        known = tracked + [v for s in sections for v in s.releases]
        write_gate(name, gate_fields(mine.releases, known), "")
        _set_output(name, kind, mine.body)
        turned.append(name)
    return turned


def _set_output(name: str, kind: str, body: str) -> None:
    """The page's output becomes the recording's (refresh_outputs then checks it by a real run)."""
    if kind == "text":
        find(name, ".out").write_text(body, encoding="utf-8")
        return
    snippet = Snippet.load(find(name, ".md"))
    fence = snippet.fence
    snippet.path.write_text(snippet.text[: fence.start("body")] + body + snippet.text[fence.end("body"):],
                            encoding="utf-8")


# --- 5. what the old pin printed, where an ungated example changed -----------------------------

def output_files() -> list[Path]:
    return snippet_paths() + [p.with_suffix(".out") for p in script_paths()]


def snapshot() -> dict[str, str]:
    """Every snippet's file as it is now, by its path under the checkout."""
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in output_files()}


def record_old_pin(old: str, before: dict[str, str], turned: list[str]) -> list[str]:
    """Ungated examples whose output moved: the old pin's output recorded, gated differs_on it."""
    recorded = []
    gates = version_gates()
    for path in output_files():
        rel = path.relative_to(ROOT).as_posix()
        name = path.stem
        if name in turned or before.get(rel, path.read_text(encoding="utf-8")) == path.read_text(encoding="utf-8"):
            continue
        gate = gates.get(name)
        if gate is not None and gate.excludes(releases.release(old)):
            continue  # already recorded there
        if path.suffix == ".md":
            kind, body = "pycon", Snippet(path, before[rel]).fence["body"]
        else:
            kind, body = "text", before[rel]
        file = path.relative_to(SNIPPETS).with_suffix(".md" if kind == "pycon" else ".py").as_posix()
        releases.record(name, file, old, kind, body)
        differs = sorted({*(gate.differs_on if gate else ()), minor(old)}, key=key)
        fields: dict[str, object] = {k: v for k, v in (("since", gate and gate.since), ("before", gate and gate.before)) if v}
        fields["differs_on"] = differs
        write_gate(name, fields, f"torch {old} printed what snippets/<page>/releases/{name}.md records (make upgrade): say why")
        recorded.append(name)
    return recorded


# --- 7. the review list ------------------------------------------------------------------------

def quoted_in_prose(removed: list[str], old: str) -> list[str]:
    """Lines of the pages (both languages) that quote a removed output line or name the old pin."""
    needles = {line.strip() for line in removed if len(line.strip()) >= 8 and re.search(r"\w{3}", line)}
    hits = []
    for page in sorted(DOCS.rglob("*.md")):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if any(needle in line for needle in needles) or re.search(rf"(?<![\d.]){re.escape(old)}(?![\d])", line):
                hits.append(f"{page.relative_to(ROOT).as_posix()}:{number}: {line.strip()[:160]}")
    return hits


def review(old: str, new: str, before: dict[str, str], turned: list[str], recorded: list[str]) -> str:
    parts = [f"# Upgrade review: torch {old} -> {new}\n"]
    removed_all: list[str] = []
    examples = []
    for path in output_files():
        rel = path.relative_to(ROOT).as_posix()
        now = path.read_text(encoding="utf-8")
        if before.get(rel, now) == now:
            continue
        lines = releases.differing_lines(before[rel], now)
        removed_all += [line[1:] for line in lines if line.startswith("-")]
        examples.append(f"## {rel}\n\n```diff\n" + "\n".join(lines) + "\n```\n")
    parts.append(f"{len(examples)} example(s) print something else on torch {new}.\n")
    parts += examples
    if turned:
        parts.append("## Gates turned around (write their `why` in snippets/versions.toml, and the pages' notes)\n\n"
                     + "".join(f"- {name}\n" for name in turned))
    if recorded:
        parts.append(f"## Recorded as what torch {old} prints (gate differs_on {minor(old)}: say why)\n\n"
                     + "".join(f"- {name}\n" for name in recorded))
    prose = quoted_in_prose(removed_all, old)
    parts.append(f"## Prose that quotes a changed line or names torch {old} ({len(prose)} lines)\n\n"
                 + "".join(f"- {hit}\n" for hit in prose))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("torch", nargs="?", help="the release to move the guide to, X.Y.Z")
    parser.add_argument("--torchvision", help="its torchvision (needed when the release is not tracked yet)")
    parser.add_argument("--review", action="store_true", help="print the last review list")
    args = parser.parse_args(argv)
    if args.review:
        print(REVIEW.read_text(encoding="utf-8") if REVIEW.exists() else "no upgrade has run here")
        return 0
    if not args.torch or not re.fullmatch(r"\d+\.\d+\.\d+", args.torch):
        parser.error("give the release as X.Y.Z: make upgrade TORCH=2.15.0")
    new = args.torch
    old, tracked, torchvision = read()
    state = json.loads(STATE.read_text(encoding="utf-8")) if STATE.exists() else {}
    if new == old and state.get("new") == new:  # resume a run that stopped after moving the pins
        old, before, turned = state["old"], state["before"], state["turned"]
        print(f"going on with the upgrade from torch {old} to {new} (build/upgrade/state.json)")
    else:
        if new == old:
            parser.error(f"torch {new} is already the pin")
        if new not in torchvision:  # 1.
            if not args.torchvision:
                parser.error(f"torch {new} is not tracked yet: give the torchvision built for it, "
                             f"make upgrade TORCH={new} TORCHVISION=X.Y.Z")
            track(new, args.torchvision)
            run(str(BIN / "nox"), "-s", f"doctests(torch='{new}')", RECORD="1")
            run(str(BIN / "python"), "-m", "tools.examples.compat")
            old, tracked, torchvision = read()
        before = snapshot()
        turned = turn_gates(old, new, tracked)  # 2.
        set_pin(new)  # 3.
        move_requirements(old, new, torchvision)
        STATE.parent.mkdir(parents=True, exist_ok=True)
        STATE.write_text(json.dumps({"old": old, "new": new, "turned": turned, "before": before}), encoding="utf-8")
    run("make", *INSTALL)  # 4.
    run(str(BIN / "python"), "-m", "tools.examples.refresh_outputs")  # 5.
    recorded = record_old_pin(old, before, turned)
    run(str(BIN / "python"), "-m", "tools.examples.compat", "--stored")  # 6.
    run("make", "generate")
    text = review(old, new, before, turned, recorded)  # 7.
    REVIEW.parent.mkdir(parents=True, exist_ok=True)
    REVIEW.write_text(text, encoding="utf-8")
    print(text)
    STATE.unlink(missing_ok=True)
    print(f"The review list is in {REVIEW.relative_to(ROOT)}; then `make test`, and `make benchmark` on an idle machine.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
