"""What a page costs as it loads (issue 16 §4: the Chinese pages as fast as the English ones), read
from the session's build; the scores themselves come from `make lighthouse` (tools/measure/lighthouse.py).

- Every page holds Material's request for the search index until the reader opens the search
  (tools/site/page_speed.py); Material still asks for it by XMLHttpRequest, the one way the held
  request is recognised.
- Chinese pages, and only they, name their CJK fonts after Material's Latin ones (inlined by
  tools/site/page_speed.py), so Han text is not laid out through the system's font fallback.
- Every page styles and lays out its code blocks only near the screen (content-visibility).
- In the browser (marker `browser`, from the visits tests/test_browser.py records): no page asks
  for the index as it loads; the search tests there prove it still comes when the reader searches.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.built_site import builds, site  # noqa: F401  (the session's strict build)
from tests.test_browser import browsed  # noqa: F401  (the visits of every page, both languages)
from tools.site import search_rank
from tools.site.page_speed import BUNDLE, CJK_FONTS, HOLD_INDEX, LAZY_CODE, SEARCH_FORM


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _html_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if SEARCH_FORM in _read(p))


def test_every_page_holds_the_search_index_until_the_search_opens(site):
    pages = _html_pages(site)
    assert len(pages) > 10 and any(site / "zh" in p.parents for p in pages), (
        f"only {len(pages)} built pages have the search form, or none in Chinese"
    )
    wrong = []
    for path in pages:
        text = _read(path)
        bundle = BUNDLE.search(text)
        if text.count(HOLD_INDEX) != 1 or bundle is None or text.index(HOLD_INDEX) > bundle.start():
            wrong.append(path.relative_to(site).as_posix())
    assert not wrong, f"pages without the hold script once, before Material's bundle: {wrong}"


def test_material_requests_the_index_as_the_hold_script_expects(site):
    bundles = list((site / "assets" / "javascripts").glob("bundle.*.min.js"))
    assert len(bundles) == 1, f"expected one Material bundle, found {bundles}"
    text = _read(bundles[0])
    assert "new XMLHttpRequest" in text and '"search/search_index.json"' in text, (
        f"{bundles[0].name} no longer requests search/search_index.json by XMLHttpRequest: "
        "tools/site/page_speed.py would hold nothing"
    )


def test_the_search_worker_ranks_a_pasted_message_first(site):
    workers = list((site / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert len(workers) == 1, f"expected one Material search worker, found {workers}"
    text = _read(workers[0])
    assert all(text.count(new) == 1 for _, new in search_rank.REPLACEMENTS), (
        f"{workers[0].name} lacks tools/site/search_rank.py's ranking (or has it twice)"
    )


def test_a_changed_search_worker_is_reported_not_patched():
    worker = ("var U=class{search(e){ s.push(B(_({},c),{score:a*(1+K(g,2)),terms:f})) .sort((s,o)=>o.score-s.score)"
              " e=e+s+o.id}return e} " + search_rank.HIGHLIGHT)
    patched, missing = search_rank.patch(worker)
    assert not missing and all(new in patched for _, new in search_rank.REPLACEMENTS)
    _, missing = search_rank.patch(worker.replace("o.score-s.score", "s.score<o.score"))
    assert missing == [".sort((s,o)=>o.score-s.score)"]


def _material_text_fonts(site: Path) -> list[str]:
    css = _read(next((site / "assets" / "stylesheets").glob("main.*.min.css")))
    found = re.search(r"--md-text-font-family:var\(--md-text-font, _\),\s*([^;}]+)", css)
    assert found, "Material's main CSS no longer sets --md-text-font-family"
    return [f.strip() for f in found.group(1).split(",")]


def test_chinese_pages_name_their_cjk_fonts(site):
    rule = r'<style>html\[lang\^="zh"\] body\{--md-text-font-family:([^}]+)\}</style>'
    found = re.fullmatch(rule, CJK_FONTS)
    assert found, f"tools/site/page_speed.py: CJK_FONTS is not one --md-text-font-family rule: {CJK_FONTS}"
    fonts = [f.strip() for f in found.group(1).split(",")]
    latin = [f for f in _material_text_fonts(site) if f != "sans-serif"]
    assert fonts[:len(latin)] == latin, f"CJK_FONTS should start with Material's Latin fonts {latin}: {fonts}"
    cjk = {'"PingFang SC"', '"Microsoft YaHei"', '"Noto Sans CJK SC"'}
    assert cjk <= set(fonts) and fonts[-1] == "sans-serif", (
        f"CJK_FONTS: the CJK fonts or the generic family are missing: {fonts}"
    )
    pages = _html_pages(site)
    assert sum('<html lang="zh"' in _read(p) for p in pages) >= 10, "fewer than 10 Chinese pages built"
    wrong = []
    for path in pages:
        text = _read(path)
        chinese = '<html lang="zh"' in text
        head = text.partition("</head>")[0]
        if (CJK_FONTS in head) != chinese or text.count(CJK_FONTS) > 1:
            wrong.append(f"{path.relative_to(site).as_posix()} ({'Chinese' if chinese else 'not Chinese'})")
    assert not wrong, f"pages whose head has the CJK font rule, or lacks it, wrongly: {wrong}"


def test_every_page_lays_out_its_code_blocks_near_the_screen_only(site):
    missing = [
        p.relative_to(site).as_posix() for p in _html_pages(site)
        if _read(p).partition("</head>")[0].count(LAZY_CODE) != 1
    ]
    assert not missing, f"pages whose head lacks the content-visibility rule for code: {missing}"
    assert "content-visibility:auto" in LAZY_CODE and "pre>code" in LAZY_CODE, LAZY_CODE


@pytest.mark.browser
def test_no_page_asks_for_the_search_index_as_it_loads(browsed):  # noqa: F811
    _, visits, searches, _ = browsed
    assert visits and searches, "the browser visited no page"
    eager = [path or "/" for path, visit in visits.items()
             if any("search_index.json" in url for url in visit.requests)]
    assert not eager, f"pages that requested the search index before the search was opened: {eager}"
