"""MkDocs hooks for the guide (registered under `hooks:` in mkdocs.yml).

1. mkdocs-static-i18n rebuilds every File in its on_files (priority -100) and drops the page flag
   that mkdocs-jupyter set, so notebooks came out as raw JSON while the strict build passed
   (ultrabug/mkdocs-static-i18n#198). Re-flag them after i18n has run.
2. i18n finds no alternate for a `.zh.ipynb` page, so the Chinese notebook's language switcher
   led to the English home page. Fill in the missing alternates from the page's own URL.
3. A page missing in Chinese falls back to English silently. Log a WARNING instead, so the strict
   build fails naming the file. GUIDE_ALLOW_FALLBACK=1 relaxes it to INFO while drafting.
4. Material reads every <link rel="alternate" hreflang> in the head as the root of a language and
   fetches <link>sitemap.xml from it; i18n points them at the page's twin, so every page asked
   for two sitemaps that do not exist (404s in the console). The head now names the language
   roots, as absolute URLs (what hreflang wants), and each language root gets its sitemap; the
   page-to-page alternates are in the sitemaps, and the switcher still links the twin page.
5. i18n writes one search index for all languages: an English search showed Chinese pages too.
   Each language root gets an index of its own pages, and its pages look for it there.
6. nbconvert inlines JupyterLab's whole stylesheet (570 KB) into each notebook page: trimmed to
   the rules the page uses (tools/site/notebook_css.py).
7. Material's search dialog has no accessible name: it gets one, in the page's language; the
   notebook cells' copy buttons get their label in the page's language too.
8. pycon lines of printed output get the class the copy button's CSS hides them by.
9. i18n builds each language into the same site_dir, so the last one's 404.html overwrote the
   English one (ultrabug/mkdocs-static-i18n#284): a mistyped English address showed a Chinese
   page whose language links led to the last page rendered. Each language now keeps its own
   404.html at its root (/404.html, /zh/404.html: hosts that look for the nearest 404.html up the
   path, as Cloudflare Pages does, serve the reader's language; GitHub Pages serves the root one),
   with its language links at the language roots and its search on its own language's index.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.plugins import event_priority

if str(Path(__file__).resolve().parents[2]) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.site.notebook_css import trim_page  # noqa: E402

log = logging.getLogger("mkdocs.hooks.guide")


@event_priority(-200)
def on_files(files, config):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:
        for file in files:
            if jupyter.should_include(file):
                file.is_documentation_page = lambda: True
    return files


@event_priority(-100)  # after i18n's on_page_context (50), which sets the switcher's links
def on_page_context(context, page, config, nav):  # every page, notebooks included
    i18n = config.plugins.get("i18n")
    locale = getattr(page.file, "locale", None)
    if i18n is not None and locale and locale != i18n.current_language:
        level = logging.INFO if os.getenv("GUIDE_ALLOW_FALLBACK") == "1" else logging.WARNING
        log.log(
            level,
            "Missing '%s' translation for 'docs/%s': add the page, or the '%s' site shows the '%s' "
            "one (falling back)",
            i18n.current_language, page.file.src_uri, i18n.current_language, locale,
        )
    if i18n is not None:
        _fill_missing_alternates(page, config, i18n.default_language)
    return context


def _fill_missing_alternates(page, config, default_language):
    """Point the switcher at the twin page where i18n found none (it misses .zh.ipynb files).

    i18n assigns `config.extra.alternate` as an attribute for each page (not as a dict key), just
    before this hook runs; the theme reads that attribute.
    """
    alternates = getattr(page.file, "alternates", None)
    links = getattr(config.extra, "alternate", None)
    if alternates is None or not links:
        return
    first, _, rest = page.url.partition("/")
    base = rest if first in alternates and first != default_language else page.url
    config.extra.alternate = [
        link if link["lang"] in alternates
        else {**link, "link": base if link["lang"] == default_language else f"{link['lang']}/{base}"}
        for link in links
    ]


# nbconvert's template embeds a module script that imports mermaid from a CDN when a notebook has
# diagrams. The guide's notebooks have none, and the site makes no outside request.
_MERMAID_LOADER = re.compile(r'<script type="module">(?:(?!</script>).)*?cdnjs\.cloudflare\.com.*?</script>', re.DOTALL)


_HEAD_ALTERNATE = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="(?P<lang>[\w-]+)">')


_OUTPUT_LINE = re.compile(r'(<span id="__span-\d+-\d+")(><span class="g[otr]">)')
_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_SEARCH_LABEL = {"en": "Search", "zh": "搜索"}
_COPY_LABEL = {"en": "Copy to clipboard", "zh": "复制"}  # Material's own words for its copy button


def _language_root(config, lang: str) -> str:
    i18n = config.plugins.get("i18n")
    default = i18n.default_language if i18n is not None else lang
    return config.site_url + ("" if lang == default else f"{lang}/")


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):
        output = trim_page(_MERMAID_LOADER.sub("", output))
    # pycon lines of printed output, marked for docs/assets/copy.css (cheaper than :has())
    output = _OUTPUT_LINE.sub(r'\1 class="pycon-output"\2', output)
    # Material's search dialog has no accessible name (Lighthouse, axe: aria-dialog-name)
    lang = getattr(page.file, "locale", None) or "en"
    output = output.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + f' aria-label="{_SEARCH_LABEL[lang]}">', 1)
    # mkdocs-jupyter's copy buttons on notebook cells say "Copy to Clipboard" in every language
    output = output.replace('aria-label="Copy to Clipboard"', f'aria-label="{_COPY_LABEL[lang]}"')
    return _search_root(_alternates_at_roots(output, config), page)


def _alternates_at_roots(output: str, config) -> str:
    """The head's hreflang alternates, pointed at the language roots (item 4)."""
    head, sep, body = output.partition("</head>")
    head = _HEAD_ALTERNATE.sub(
        lambda m: f'<link rel="alternate" href="{_language_root(config, m["lang"])}" hreflang="{m["lang"]}">', head
    )
    return head + sep + body


_SWITCH_LINK = re.compile(r'<a href="[^"]*" hreflang="(?P<lang>[\w-]+)" class="md-select__link"')
_NOT_FOUND_TITLE = {"en": "404 - Not found", "zh": "404 - 找不到这个页面"}
_not_found: dict[str, str] = {}  # language -> its 404.html, written at its root by on_post_build


@event_priority(-300)  # after tools/site/page_speed.py's on_post_template, on the final text
def on_post_template(output, template_name, config):
    i18n = config.plugins.get("i18n")
    if template_name != "404.html" or i18n is None:
        return output
    lang, default = i18n.current_language, i18n.default_language
    # served at any address, so its links keep site_url's path (as MkDocs writes this page)
    root = urlsplit(config.site_url).path or "/"
    here = lambda code: root + ("" if code == default else f"{code}/")  # noqa: E731
    # i18n leaves the alternates of the last page rendered: point them at the language roots
    output = _SWITCH_LINK.sub(lambda m: f'<a href="{here(m["lang"])}" hreflang="{m["lang"]}" class="md-select__link"', output)
    output = _alternates_at_roots(output, config)
    if lang != default:
        output = _CONFIG_BASE.sub(lambda m: f"{m[1]}{here(lang)}{m[3]}", output, count=1)
        output = output.replace(f"<h1>{_NOT_FOUND_TITLE[default]}</h1>", f"<h1>{_NOT_FOUND_TITLE.get(lang, _NOT_FOUND_TITLE[default])}</h1>", 1)
    _not_found[lang] = output
    return output


_URL_ENTRY = re.compile(r"\s*<url>.*?</url>", re.DOTALL)
_CONFIG_BASE = re.compile(r'(<script id="__config" type="application/json">\{"annotate": [^,]*, "base": ")([^"]*)(")')


def _other_languages(config) -> list[str]:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return []
    return [lang.locale for lang in i18n.config.languages if lang.locale != i18n.default_language]


def _search_root(output: str, page) -> str:
    """Material looks for the search index (and resolves result links) at `base`, the site root.
    Point a translated page at its language root, where its own index is written."""
    lang = getattr(page.file, "locale", None)
    if not lang or not page.url.startswith(f"{lang}/"):
        return output
    return _CONFIG_BASE.sub(lambda m: f"{m[1]}{m[2]}/{lang}/{m[3]}", output, count=1)


def _titles_only(docs: list[dict], prefix: str) -> list[dict]:
    """Search entries with the pages under `prefix` reduced to their title. The notebooks repeat
    the tutorial's code and prose in one long page, which outranked the page that explains a
    pasted error message."""
    return [
        {**d, "text": ""} if d["location"].startswith(prefix) else d
        for d in docs
        if not (d["location"].startswith(prefix) and "#" in d["location"])
    ]


@event_priority(-200)  # after i18n's on_post_build (-100), which builds the other languages
def on_post_build(config):
    """Per language root: a sitemap of its pages and a search index of its pages.

    i18n writes one sitemap and one search index for the whole site, so an English reader's
    search showed Chinese pages as well, and the reverse.
    """
    i18n = config.plugins.get("i18n")
    if i18n is None or i18n.building:  # a nested build of one language: the files are not final
        return
    site = Path(config.site_dir)
    sitemap = site / "sitemap.xml"
    text = sitemap.read_text(encoding="utf-8")
    head = text.partition("<url>")[0].rstrip()
    index_path = site / "search" / "search_index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    docs = index["docs"]
    for lang in _other_languages(config):
        if not (site / lang).is_dir():
            continue
        root = _language_root(config, lang)
        entries = [e for e in _URL_ENTRY.findall(text) if f"<loc>{root}" in e]
        (site / lang / "sitemap.xml").write_text(head + "".join(entries) + "\n</urlset>\n", encoding="utf-8")
        mine = [{**d, "location": d["location"][len(lang) + 1:]} for d in docs if d["location"].startswith(f"{lang}/")]
        _write_index(site / lang / "search" / "search_index.json", index, mine)
        docs = [d for d in docs if not d["location"].startswith(f"{lang}/")]
    _write_index(index_path, index, docs)
    for lang, text in _not_found.items():
        (site / ("" if lang == i18n.default_language else lang) / "404.html").write_text(text, encoding="utf-8")
    _not_found.clear()


def _write_index(path: Path, index: dict, docs: list[dict]) -> None:
    path.parent.mkdir(exist_ok=True)
    text = json.dumps({**index, "docs": _titles_only(docs, "notebooks/")}, ensure_ascii=False, separators=(",", ":"))
    path.write_text(text, encoding="utf-8")
