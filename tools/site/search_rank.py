"""MkDocs hook (registered under `hooks:` in mkdocs.yml): a pasted error message finds the pages
that show it (issue 26 §4).

Readers paste a whole error line into the search box. Material's search worker asks Lunr for any
of the query's words (each as a prefix), scores titles 1000 times higher than text and does not
normalise by a section's length, so a heading that shares one common word with the message
("Tensor", "grad") came before the section that shows the message itself: on the guide's own 77
error texts, 57 of 154 searches (both languages) missed the page that shows them in the first
three results.

For a query of five words or more, the worker now sorts its results first by the longest run of
the query's words that the section holds in the same order, side by side (its text, lowercased, as
runs of letters and digits; a run of four words or more counts): the pasted line itself, less what
a terminal adds around it (the file and line before a warning, torch's build path in "(Triggered
internally at …)") and what differs from the page's example (a shape, a tensor type, a node name),
which only split the run. Then by whether its heading quotes the message (the heading's quoted
phrase, or the heading, of four words or more inside the query, or the reverse: the error pages'
headings quote each message's key phrase; a heading that is the quote alone, an error's own section,
comes before one that quotes it beside its own case), then by how many of the query's words the section
contains, then by Lunr's score as before. Shorter queries are ranked as Material ranks them.
tests/test_browser.py searches every error line the pages print or quote, as printed and as a
terminal prints it (as_a_terminal_prints), in both languages: each finds a page that shows it among
the first three results.

It also mends a Lunr bug that broke the Chinese site's search for any query holding the word `0`
(with the guide's 2026-11 text; which words break depends on the whole index): see the last
replacement. And it marks the query's words in the results' text in one pass instead of one pass
per word: the same text, in two thirds of the time for a pasted line (tests/test_search_rank.py
runs Material's loop and this one side by side).

The change is six replacements in Material's minified worker (pinned in requirements-site.txt),
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
    # the longest run of the query's words that the text holds in the same order, side by side:
    # the pasted line minus what a terminal adds (a file path before it, a build path after it)
    # and what differs from the page's run (another shape, tensor type or node name)
    # (walked along the query, over where each of its words stands in the section: a pasted line
    # meets hundreds of sections, and walking their text instead cost 14% of the worker's time)
    "let guideQs=null,guideQa=null;"
    "function guideRun(q,t){if(q!==guideQs){guideQa=q.split(\" \");guideQs=q}let best=0,prev=null;"
    "for(const w of guideQa){const ps=t.get(w);if(ps===undefined){prev=null;continue}const cur=new Map;"
    "for(const p of ps){const r=(prev!==null&&prev.get(p-1)||0)+1;cur.set(p,r);if(r>best)best=r}prev=cur}"
    "return best}"
    # each section's words, worked out once per page: a pasted line matches hundreds of sections
    # by one common word or another (20 long pasted lines in the browser: 11.0 s -> 9.1 s)
    "const guideSeen=new Map;function guideText(o,t){let w=guideSeen.get(o);"
    "if(w===undefined){w=new Map;guideWords(t).split(\" \").forEach((x,p)=>{let l=w.get(x);l||w.set(x,l=[]);l.push(p)});"
    "guideSeen.set(o,w)}return w}"
    "function guideRank(n,q,terms,o,text,title){if(n<5)return 0;"
    "let k=Object.values(terms).filter(Boolean).length,m=(title||\"\").match(/\"([^\"]+)\"/),"
    "h=guideWords(m?m[1]:title||\"\"),run=q?guideRun(q,guideText(o,text)):0;"
    'return(run>3?run*1e3:0)'
    # a heading that quotes the message (or the message that quotes the heading's phrase); more
    # where the heading is the quote and nothing else (an error's own section, as on pitfalls.md),
    # above the sections that quote it beside their own case ("A slice of a parameter: ...")
    '+(q&&h.split(" ").length>3&&((" "+q+" ").includes(" "+h+" ")||(" "+h+" ").includes(" "+q+" "))'
    '?500+(m&&guideWords((title||"").replace(m[0],""))===""?100:0):0)+k}'
)

# Material's loop that marks the query's words in a block of a result's text, one word at a time
HIGHLIGHT = ('for(let y of g.sort((b,E)=>E-b)){let b=(l[y]>>>12)-m,E=(l[y]>>>2&1023)+b;'
             'd=[d.slice(0,b),"<mark>",d.slice(b,E),"</mark>",d.slice(E)].join("")}')

# (what Material's worker has, what it becomes): each must occur exactly once.
REPLACEMENTS = [
    ("var U=class{", HELPERS + "var U=class{"),
    # the query as typed, before Material rewrites it into Lunr's syntax
    # A pasted line has no query syntax: "the smallest input value was -0.9091" made Lunr drop
    # every section holding 0.9091 (a leading - prohibits a term), the very section that shows it.
    ("search(e){", "search(e){if(e.trim().split(/\\s+/).length>4)e=e.replace(/(^|\\s)[-+]+(?=\\S)/g,\"$1\");"
     "let guideQ=guideWords(e);"),
    # r: the query's clauses, o: the section's location, f: the query words it contains
    ("s.push(B(_({},c),{score:a*(1+K(g,2)),terms:f}))",
     "s.push(B(_({},c),{score:a*(1+K(g,2)),terms:f,"
     + MARK + ":guideRank(r.length,guideQ,f,o,(this.map.get(o)||{}).text||\"\",(this.map.get(o)||{}).title)}))"),
    (".sort((s,o)=>o.score-s.score)", ".sort((s,o)=>o." + MARK + "-s." + MARK + "||o.score-s.score)"),
    # Material marks the query's words in each result's text by rebuilding the whole block once per
    # word found ([before, "<mark>", word, "</mark>", after].join, from the last word back): a
    # pasted line finds common words hundreds of times. The words are now marked in one pass, front
    # to back, into the same string; where two words would overlap or lie outside the block (Lunr's
    # positions never do), Material's own loop runs. The 585 lines the browser tests paste, in Node on
    # the built indexes: 91 s -> 56 s, every answer byte for byte the same (2026-11-30).
    (HIGHLIGHT, "{g.sort((b,E)=>b-E);let P=[],k=0;for(let y of g){let b=(l[y]>>>12)-m,E=(l[y]>>>2&1023)+b;"
     "if(b<k||E>d.length){P=null;break}P.push(d.slice(k,b),\"<mark>\",d.slice(b,E),\"</mark>\");k=E}"
     "if(P!==null)P.push(d.slice(k)),d=P.join(\"\");else " + HIGHLIGHT + "}"),
    # Lunr's TokenSet key is each edge's label followed by the child's id with nothing between, so
    # with digit labels two different nodes can share a key ("1"->23 and "1"->2,"3"->4 read alike
    # once ids grow) and the minimised word graph joins them: the query `0` expanded to
    # "0.8750.0125", a word that is not in the index, and the worker threw (lunr.js#503 is this
    # symptom). A comma after each id makes the key unambiguous.
    ("e=e+s+o.id}return e}", "e=e+s+o.id+\",\"}return e}"),
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
