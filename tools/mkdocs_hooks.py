"""MkDocs hooks for the guide (registered under `hooks:` in mkdocs.yml).

1. mkdocs-static-i18n rebuilds every File in its on_files (priority -100) and drops the page flag
   that mkdocs-jupyter set, so notebooks came out as raw JSON while the strict build passed
   (ultrabug/mkdocs-static-i18n#198). Re-flag them after i18n has run.
2. i18n finds no alternate for a `.zh.ipynb` page, so the Chinese notebook's language switcher
   led to the English home page. Fill in the missing alternates from the page's own URL.
3. A page missing in Chinese falls back to English silently. Log a WARNING instead, so the strict
   build fails naming the file. GUIDE_ALLOW_FALLBACK=1 relaxes it to INFO while drafting.
"""

from __future__ import annotations

import logging
import os
import re

from mkdocs.plugins import event_priority

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


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):
        output = _MERMAID_LOADER.sub("", output)
    return output
