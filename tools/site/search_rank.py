"""MkDocs hook (registered under `hooks:` in mkdocs.yml): a pasted error message finds the pages
that show it (issue 26 §4).

Readers paste a whole error line into the search box. Material's search worker asks Lunr for any
of the query's words (each as a prefix), scores titles 1000 times higher than text and does not
normalise by a section's length, so a heading that shares one common word with the message
("Tensor", "grad") came before the section that shows the message itself: on the guide's own 77
error texts, 57 of 154 searches (both languages) missed the page that shows them in the first
three results.

For a query of five words or more, the worker now sorts its results first by whether the section
contains the query's words in order (its text, lowercased, as runs of letters and digits, holds
the query's runs as one contiguous sequence: the pasted line itself), then by whether its heading
quotes the message (the heading's quoted phrase, or the heading, of four words or more inside the
query, or the reverse: the error pages' headings quote each message's key phrase), then by how
many of the query's words the section contains, then by Lunr's score as before. Shorter queries
are ranked as Material ranks them. Measured with tests/test_browser.py's searches (260, both
languages, the new error pages included): none misses a page that prints the line in the first
three results; the pitfall headings' key phrases (32) all find the pitfalls page among the first
three.

The change is four replacements in Material's minified worker (pinned in requirements-site.txt),
made after the build. If one of them no longer matches (a Material upgrade), the hook says so
with a warning, which fails the strict build.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.search_rank")

MARK = "guideRank"

# Defined once, before the worker's search class.
HELPERS = (
    'function guideWords(t){return(t.replace(/<[^>]*>/g," ").replace(/&[#\\w]+;/g," ").toLowerCase()'
    '.match(/[a-z0-9]+/g)||[]).join(" ")}'
    "function guideRank(n,q,terms,text,title){if(n<5)return 0;"
    "let k=Object.values(terms).filter(Boolean).length,m=(title||\"\").match(/\"([^\"]+)\"/),"
    "h=guideWords(m?m[1]:title||\"\");"
    'return(q&&(" "+guideWords(text)+" ").includes(" "+q+" ")?1e3:0)'
    # a heading that quotes the message (or the message that quotes the heading's phrase)
    '+(q&&h.split(" ").length>3&&((" "+q+" ").includes(" "+h+" ")||(" "+h+" ").includes(" "+q+" "))?500:0)+k}'
)

# (what Material's worker has, what it becomes): each must occur exactly once.
REPLACEMENTS = [
    ("var U=class{", HELPERS + "var U=class{"),
    # the query as typed, before Material rewrites it into Lunr's syntax
    ("search(e){", "search(e){let guideQ=guideWords(e);"),
    # r: the query's clauses, o: the section's location, f: the query words it contains
    ("s.push(B(_({},c),{score:a*(1+K(g,2)),terms:f}))",
     "s.push(B(_({},c),{score:a*(1+K(g,2)),terms:f,"
     + MARK + ":guideRank(r.length,guideQ,f,(this.map.get(o)||{}).text||\"\",(this.map.get(o)||{}).title)}))"),
    (".sort((s,o)=>o.score-s.score)", ".sort((s,o)=>o." + MARK + "-s." + MARK + "||o.score-s.score)"),
]


def patch(worker: str) -> tuple[str, list[str]]:
    """The worker with the ranking applied, and the replacements that did not match."""
    missing = []
    for old, new in REPLACEMENTS:
        if worker.count(old) != 1:
            missing.append(old)
            continue
        worker = worker.replace(old, new)
    return worker, missing


def on_post_build(config):
    workers = sorted(Path(config["site_dir"], "assets", "javascripts", "workers").glob("search.*.min.js"))
    if len(workers) != 1:
        log.warning("expected one Material search worker in assets/javascripts/workers, found %d "
                    "(tools/site/search_rank.py)", len(workers))
        return
    worker = workers[0]
    text = worker.read_text(encoding="utf-8")
    if MARK in text:  # `mkdocs serve` rebuilds into the same folder
        return
    patched, missing = patch(text)
    if missing:
        log.warning("Material's search worker changed: %s not found once in %s; pasted error messages "
                    "are ranked as Material ranks them (tools/site/search_rank.py)",
                    ", ".join(repr(m) for m in missing), worker.name)
        return
    worker.write_text(patched, encoding="utf-8")
