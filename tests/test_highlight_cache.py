"""tools/site/highlight_cache.py: a code block highlighted once for both languages is the block
Pygments writes, and a title that goes into the page's HTML stash is never taken from the cache."""

import markdown
from pymdownx import highlight

from tools.site import highlight_cache

BLOCK = '```pycon title="example"\n>>> x = 1 + 1\n>>> print(x)\n2\n```\n'
CONFIG = {"pymdownx.highlight": {"line_spans": "__span", "pygments_lang_class": True}}


def _convert(text: str) -> str:
    md = markdown.Markdown(extensions=["pymdownx.highlight", "pymdownx.superfences"], extension_configs=CONFIG)
    return md.convert(text)


def test_a_cached_block_is_the_block_pygments_writes(monkeypatch):
    highlight_cache._RESULTS.clear()
    cached = [_convert(BLOCK), _convert(BLOCK)]  # the second comes from the cache
    assert len(highlight_cache._RESULTS) == 1
    monkeypatch.setattr(highlight.Highlight, "highlight", highlight_cache._ORIGINAL)
    assert cached == [_convert(BLOCK)] * 2


def test_a_title_in_html_mode_is_not_cached():
    highlight_cache._RESULTS.clear()
    html = _convert(BLOCK.replace('title="example"', 'title="<b>example</b>" title_mode="html"'))
    assert "<b>example</b>" in html
    assert not highlight_cache._RESULTS


def test_the_next_build_reads_what_this_one_highlighted_and_only_under_the_same_versions(tmp_path, monkeypatch):
    highlight_cache._RESULTS.clear()
    highlight_cache._USED.clear()
    html = _convert(BLOCK)
    highlight_cache.save("en", tmp_path)
    (key,) = highlight_cache._USED
    highlight_cache._RESULTS.clear()
    highlight_cache.load(tmp_path)
    assert highlight_cache._RESULTS == {key: html}
    monkeypatch.setattr(highlight_cache, "_VERSIONS", ("another Pygments", "", ""))
    highlight_cache._RESULTS[key] = "stale"
    assert _convert(BLOCK) == html  # another key: highlighted again, the stale entry unread


def test_a_file_holds_only_what_its_build_used(tmp_path):
    highlight_cache._RESULTS.clear()
    highlight_cache._USED.clear()
    highlight_cache._RESULTS["left over from an older build"] = "<pre></pre>"
    _convert(BLOCK)
    highlight_cache.save("zh", tmp_path)
    highlight_cache._RESULTS.clear()
    highlight_cache.load(tmp_path)
    assert list(highlight_cache._RESULTS) == list(highlight_cache._USED)
