"""tools/site/search_rank.py's marking of the query's words, against Material's own loop: the same
text for every result. Both run in Node (Playwright's, which the browser tests install), on
Material's worker as pinned and as the hook patches it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import material

from tools.site import search_rank

WORKERS = Path(material.__file__).parent / "templates" / "assets" / "javascripts" / "workers"

# Material's q(t, e, r, n): marks positions r (block << 20 | token) in the strings t, whose blocks
# e hold each token as start << 12 | length << 2 | kind; n keeps the text between the blocks.
_Q = re.compile(r"function q\(t,e,r,n=!1\)\{.*?\}(?=function ae\()", re.S)

# Seeded cases: tokens in order (Lunr's), and tokens that overlap, repeat or are empty (the loop
# Material's own code then runs); one string or several, with and without the text between blocks.
_SAME_TEXT_JS = r"""
const [orig, patched] = SOURCES.map(src => new Function(src + '; return q')());
let seed = 7;
const rand = n => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 16) % n; };
const word = () => 'abcdefghij'.slice(0, 1 + rand(9)) + ' ';
let fast = 0;
for (let c = 0; c < 3000; c++) {
  const strings = Array.from({length: 1 + rand(3)}, () => Array.from({length: 5 + rand(40)}, word).join(''));
  const table = [], positions = [];
  const tidy = rand(4) > 0;
  strings.forEach(s => {
    for (let start = 0; start < s.length;) {
      const end = Math.min(s.length, start + 5 + rand(60)), tokens = [];
      for (let at = start; at < end; at += 1 + rand(8)) {
        const len = tidy ? Math.min(1 + rand(5), end - at) : rand(9);
        tokens.push(at << 12 | len << 2);
        if (tidy) at += len;
      }
      if (!tokens.length) tokens.push(start << 12 | 1 << 2);
      table.push(tokens);
      start = end;
    }
  });
  table.forEach((tokens, block) => tokens.forEach((_, i) => {
    if (rand(3) === 0) positions.push(block << 20 | i);
    if (!tidy && rand(9) === 0) positions.push(block << 20 | i);
  }));
  const keep = rand(2) === 0;
  const want = orig(strings, table, [...positions], keep), got = patched(strings, table, [...positions], keep);
  if (JSON.stringify(want) !== JSON.stringify(got)) {
    console.log(JSON.stringify({c, strings, table, positions, keep, want, got}));
    process.exit(1);
  }
  if (tidy) fast++;
}
console.log(JSON.stringify({fast}));
"""


def _node() -> str:
    from playwright._impl._driver import compute_driver_executable

    return str(compute_driver_executable()[0])


def _q(worker: str, name: str) -> str:
    found = _Q.findall(worker)
    assert len(found) == 1, (
        f"{name}: Material's function q(t,e,r,n) not found once before function ae(: the pinned "
        "Material changed; tools/site/search_rank.py's HIGHLIGHT must follow it")
    return found[0]


def test_marking_the_words_in_one_pass_gives_materials_text():
    [path] = WORKERS.glob("search.*.min.js")
    worker = path.read_text(encoding="utf-8")
    patched, missing = search_rank.patch(worker)
    assert not missing, f"tools/site/search_rank.py: not found once in {path.name}: {missing}"
    orig_q, patched_q = _q(worker, path.name), _q(patched, "the patched worker")
    assert search_rank.HIGHLIGHT in orig_q and search_rank.HIGHLIGHT not in patched_q.replace(
        "else " + search_rank.HIGHLIGHT, ""), "the patched q still marks one word at a time"
    script = _SAME_TEXT_JS.replace("SOURCES", json.dumps([orig_q, patched_q]))
    run = subprocess.run([_node(), "-"], input=script, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"tools/site/search_rank.py marks other text than Material: {run.stdout}{run.stderr}"
    assert json.loads(run.stdout)["fast"] > 1000, run.stdout  # most cases took the one-pass path
