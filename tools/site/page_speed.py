"""MkDocs hook (registered under `hooks:` in mkdocs.yml): what a page costs as it loads, the
Chinese pages' above all (issue 16 §4; `make lighthouse` measures it, tools/measure/lighthouse.py).

1. The search index loads when the reader opens the search, not with every page.
   Material's bundle requests search/search_index.json as soon as it runs, parses it on the main
   thread and hands it to its search worker, which builds the Lunr index: 177 KB (gzip) for
   English, 216 KB for Chinese (886 KB unpacked: jieba's U+200B word boundaries and three UTF-8
   bytes per Han character), and the worker's build of the Chinese index takes longer. Lighthouse's
   simulated slow 4G puts every request made before the observed first paint on that paint's path,
   so whenever the paint came late (a loaded machine), the index's download was added to the
   page's first and largest paint. A short script, run before the bundle, holds that one request
   until the reader shows an intent to search: a tap or focus on the search field or its button,
   a change of the search toggle, or a page opened from a search result (?h=) or a shared search
   (?q=). The rest is Material's own code path: it waits for the request it already made, shows
   "Initializing search" meanwhile, and runs a query typed before the index is ready once it is.

2. Chinese pages name the usual Simplified Chinese fonts after Material's Latin ones. Without them
   every Han character went through the system's font fallback: the Chinese pages' layout took
   1.6 to 2.6 times as long as their English twins' (Chromium on Debian), now about as long.

3. Code blocks away from the screen are neither styled nor laid out until the reader scrolls near
   them (content-visibility: auto on `pre > code`, which holds one span per line and per token:
   most of the pitfalls page's 5,700 elements). Material's bundle restyles the whole page several
   times as it starts (its palette sets the body's colour attributes, then reads computed styles);
   each restyle now skips those spans: half the style work on the longest pages, in both
   languages. The rule is on the code element, not its .highlight box, so the paint containment
   it brings clips nothing of the block's own focus outline or its copy button.

The rules are inlined in the head: a stylesheet of their own would be one more request before the
first paint, on every page.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger("mkdocs.hooks.page_speed")

# Material's bundle, loaded by every page that has the search form
BUNDLE = re.compile(r'<script src="[^"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js"></script>')
SEARCH_FORM = 'name="search"'

# Plain ES5 in one line: it runs on every page, before anything else of Material's
HOLD_INDEX = (
    "<script>(function(){"
    "var p=XMLHttpRequest.prototype,open=p.open,send=p.send,held=[],go=false;"
    # only the search index waits; every other request (sitemaps) goes out as before
    "p.open=function(m,u){this.guideIndex=/\\/search\\/search_index\\.json$/.test(u);"
    "return open.apply(this,arguments)};"
    "p.send=function(){if(this.guideIndex&&!go){held.push([this,arguments]);return}"
    "return send.apply(this,arguments)};"
    "function release(){if(go)return;go=true;"
    "held.splice(0).forEach(function(h){send.apply(h[0],h[1])})}"
    # a result link (?h=) highlights its terms and a shared search (?q=) opens the search at once
    "if(/[?&][hq]=/.test(location.search))release();"
    "['pointerdown','focusin','change'].forEach(function(type){"
    "document.addEventListener(type,function(e){var t=e.target;"
    "if(t&&t.closest&&t.closest('.md-search,[for=\"__search\"],[data-md-toggle=\"search\"]'))release()"
    "},true)})"
    "})()</script>"
)

# Material's own list (-apple-system, BlinkMacSystemFont, Helvetica, Arial), then the CJK fonts
# of macOS/iOS, Windows and Linux; Material sets the variable on body
CJK_FONTS = (
    '<style>html[lang^="zh"] body{--md-text-font-family:-apple-system, BlinkMacSystemFont, '
    'Helvetica, Arial, "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", '
    '"Source Han Sans SC", "WenQuanYi Micro Hei", sans-serif}</style>'
)
CHINESE_PAGE = re.compile(r'<html lang="zh[^"]*"')

# auto: once laid out, a block keeps its real height while off screen again
LAZY_CODE = (
    "<style>.md-typeset pre>code{content-visibility:auto;contain-intrinsic-size:auto 12rem}</style>"
)


def _speed_up(output: str, where: str) -> str:
    if "</head>" in output:
        styles = LAZY_CODE + (CJK_FONTS if CHINESE_PAGE.search(output) else "")
        output = output.replace("</head>", styles + "</head>", 1)
    if SEARCH_FORM not in output:
        return output
    found = BUNDLE.search(output)
    if found is None:
        log.warning("%s has the search form but not Material's bundle script: the search index "
                    "would load with the page (tools/site/page_speed.py)", where)
        return output
    return output[:found.start()] + HOLD_INDEX + output[found.start():]


def on_post_page(output, page, config):
    return _speed_up(output, f"docs/{page.file.src_uri}")


def on_post_template(output, template_name, config):
    # 404.html: Material renders it outside the pages
    return _speed_up(output, template_name) if template_name == "404.html" else output
