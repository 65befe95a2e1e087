"""tools/site/search_text.py: Material's search parser, given a page without its <span> tags,
indexes what it indexes from the page with them (sections, titles and text), on the guide's own
pages: the largest code-heavy ones of both languages, from the session's strict build."""

import pickle
import re

import pytest
from material.plugins.search.plugin import Parser

from tests.built_site import builds, site  # noqa: F401  (the session's strict build)
from tools.site import search_text

PAGES = ["compatibility", "zh/compatibility", "pitfalls", "zh/torch-compile", "hook-timing", "zh/deepspeed"]


def _index(html: str) -> list[tuple]:
    parser = Parser()
    parser.feed(html)
    parser.close()
    return [(s.id, "".join(s.title), "".join(s.text)) for s in parser.data]


@pytest.mark.parametrize("path", PAGES)
def test_the_index_of_a_page_without_spans_is_the_same(site, path):
    html = (site / path / "index.html").read_text(encoding="utf-8")
    article = html[html.index("<article"):html.index("</article>")]
    # the template's footer ("Last update …"), which is not page.content, the parser's input
    article = re.sub(r'<aside class="md-source-file">.*?</aside>', "", article, flags=re.DOTALL)
    assert article.count("<span") > 100, f"{path}: few <span> tags; pick a page with code"
    assert _index(search_text._SPAN.sub("", article)) == _index(article)


def test_every_span_tag_is_removed_and_nothing_else():
    html = ('<pre><span class="gp">&gt;&gt;&gt; </span><span id="__span-0-1" title="a b">x</span>'
            '<b>y</b></pre><spanx>z</spanx>')
    assert search_text._SPAN.sub("", html) == "<pre>&gt;&gt;&gt; x<b>y</b></pre><spanx>z</spanx>"
    assert not re.search(r"</?span\b", search_text._SPAN.sub("", html))


@pytest.mark.parametrize("path", ["zh/pitfalls", "zh/deepspeed"])
def test_each_chinese_run_is_cut_as_jieba_cuts_it(site, path):
    """_CutOnce's remembered cut of a run of Chinese characters is jieba's own, asked first or
    again, and a call with jieba's options goes to jieba."""
    import jieba
    from material.plugins.search import plugin

    html = (site / path / "index.html").read_text(encoding="utf-8")
    runs = [run.encode() for run in re.findall(r"[\u4e00-\u9fff]+", html)]
    assert len(runs) > 200, f"{path}: few runs of Chinese characters"
    cut_once = search_text._CutOnce(jieba)
    for run in runs + runs:
        assert list(cut_once.cut(run)) == list(jieba.cut(run)), run.decode()
    assert list(cut_once.cut(runs[0], cut_all=True)) == list(jieba.cut(runs[0], cut_all=True))
    before = plugin.jieba
    try:  # the hook puts it in the plugin's place, once
        search_text.on_config({}), search_text.on_config({})
        assert isinstance(plugin.jieba, search_text._CutOnce) and plugin.jieba._jieba is jieba
    finally:
        plugin.jieba = before


def test_the_cuts_kept_on_disk_are_read_back_under_the_same_jieba_only(tmp_path):
    """The next build reads the runs the last one cut (.cache/search-cuts-<language>.pickle) instead
    of asking jieba, as long as jieba's release and dictionary are the same."""
    import jieba

    runs = ["中间张量的梯度", "钩子没有被调用"]
    first = search_text._CutOnce(jieba, folder=tmp_path)
    words = [first.cut(run) for run in runs]
    assert words == [tuple(jieba.cut(run)) for run in runs]
    first.save("zh", folder=tmp_path)

    class Refuses:  # the same jieba, which must not be asked again
        __version__, dt = jieba.__version__, jieba.dt

        def cut(self, text):
            raise AssertionError(f"jieba asked again for {text}")

    assert [search_text._CutOnce(Refuses(), folder=tmp_path).cut(run) for run in runs] == words

    class Newer(Refuses):
        __version__ = jieba.__version__ + ".1"

    with pytest.raises(AssertionError, match="asked again"):
        search_text._CutOnce(Newer(), folder=tmp_path).cut(runs[0])


def _sections(parser) -> list[tuple]:
    return [(s.el.tag, s.el.attrs, s.depth, s.id, s.title, s.text) for s in parser.data]


@pytest.mark.parametrize("path", ["pitfalls", "zh/deepspeed"])
def test_a_page_parsed_before_gets_the_same_sections_without_parsing(site, path, tmp_path):
    """The parser the hook installs reads a page's HTML once: fed the same HTML again (in this
    build or, from .cache/search-sections-<language>.pickle, the next), it gives copies of the
    sections Material's parser gives, which the index may change without touching the kept ones."""
    html = search_text._SPAN.sub("", (site / path / "index.html").read_text(encoding="utf-8"))
    material = Parser()
    material.feed(html)
    material.close()

    kept = search_text._Sections(folder=tmp_path)
    parsed_once = search_text._parsing_once(Parser, kept)
    for _ in range(3):  # parsed, then remembered twice
        parser = parsed_once()
        parser.feed(html)
        parser.close()
        assert _sections(parser) == _sections(material)
        parser.data[0].title = ["changed by the index"]
    kept.save("zh", folder=tmp_path)

    class Refuses(Parser):  # Material's parser, which must not be asked again
        def goahead(self, end):
            raise AssertionError("the page was parsed again")

    again = search_text._parsing_once(Refuses, search_text._Sections(folder=tmp_path))()
    again.feed(html)
    again.close()
    assert _sections(again) == _sections(material)

    stale = search_text._Sections(folder=tmp_path)
    assert len(stale) == 1
    (tmp_path / "search-sections-zh.pickle").write_bytes(
        pickle.dumps({"stamp": ("another Material",), "sections": dict(stale)}))
    assert not search_text._Sections(folder=tmp_path), "sections kept under another Material were read"
