"""MkDocs hook: what a reader learns about a page before reading it (registered in mkdocs.yml).

1. "Verified on torch 2.4.1–2.15.0 (8 of 8 releases tested), 2026-11-24" under the title of every
   page with examples, from snippets/compatibility/verified.json, which `python -m tools.compat`
   writes from the matrix results (never typed). An example that printed the page's output on
   fewer releases (snippets/versions.toml) shows its own range in its title bar.
2. On a Chinese page: whether the translation is in step with the English page, from git, as
   `make translation-status` reports it (tools/translation_status.py).
3. The date of the last commit that changed the page's source, which Material shows at the foot
   of the page as "Last update" (the key its template reads is the one the
   git-revision-date-localized plugin fills; that plugin finds no history with Debian 12's git
   2.39, whose `git log --diff-filter=r` lists nothing, so one `git log` here does it). A page not
   committed yet shows the build's date; a build outside a git checkout shows none.
4. A description for the page's meta tags (search results, shared links): its first paragraph.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from mkdocs.utils import get_relative_url

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(ROOT))
from tools.translation_status import pairs  # noqa: E402

VERIFIED = ROOT / "snippets" / "compatibility" / "verified.json"
DESCRIPTION_LENGTH = {"en": 200, "zh": 100}  # characters; Chinese packs more into each

TEXT = {
    "en": {
        "verified": "Verified on torch {releases}",
        "tested": " ({count} of {tested} releases tested), {date}.",
        "examples": " An example that differs on some releases shows its own range; the page says what differs.",
        "range": "Printed this output on torch {releases}; the page says what differs elsewhere",
    },
    "zh": {
        "verified": "已在 torch {releases} 上验证",
        "tested": "（测试的 {tested} 个版本中通过 {count} 个），{date}。",
        "examples": "个别示例只在部分版本上输出相同，标题栏标出它自己的版本范围，差异见正文。",
        "range": "在 torch {releases} 上输出与此相同；其他版本的差异见正文",
    },
}
SYNC = {
    "in_step": "译文与英文原文同步。",
    "behind": "英文原文在本译文之后有 {count} 次修改（最近一次 {date}），请以<a href=\"{href}\">英文原文</a>为准。",
    "uncommitted": "英文原文有尚未提交的修改，请以<a href=\"{href}\">英文原文</a>为准。",
}


@lru_cache(maxsize=1)
def _verified() -> dict:
    return json.loads(VERIFIED.read_text(encoding="utf-8")) if VERIFIED.exists() else {}


@lru_cache(maxsize=1)
def _translations() -> dict:
    """docs/<page>.zh.md -> its Pair; {} outside a git checkout (a build from a tarball)."""
    try:
        return {pair.chinese: pair for pair in pairs(ROOT)}
    except (OSError, subprocess.CalledProcessError):
        return {}


@lru_cache(maxsize=1)
def _last_commits() -> dict[str, str] | None:
    """docs/... path -> date (YYYY-MM-DD) of the newest commit that changed it; None outside git."""
    try:
        log = subprocess.run(["git", "log", "--format=%x00%cs", "--name-only", "--", "docs"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    dates: dict[str, str] = {}
    for entry in log.split("\0")[1:]:
        date, *names = entry.strip().split("\n")
        for name in filter(None, names):
            dates.setdefault(name, date)
    return dates


def last_update(src_uri: str) -> str | None:
    dates = _last_commits()
    if dates is None:
        return None
    return dates.get(f"docs/{src_uri}") or time.strftime("%Y-%m-%d", time.gmtime())


def _locale(page) -> str:
    return getattr(page.file, "locale", None) or "en"


def _english_source(page) -> str:
    return page.file.src_uri.replace(".zh.", ".")


_FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_TITLE_BAR = re.compile(r'<span class="filename">(?P<name>[\w.-]+?)(?:\.py)?</span>')


def _description(content: str, lang: str) -> str | None:
    match = _FIRST_PARAGRAPH.search(content)
    if match is None:
        return None
    text = " ".join(html.unescape(_TAG.sub("", match[1])).split())
    limit = DESCRIPTION_LENGTH[lang]
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if lang == "en" else text[:limit]
    return cut.rstrip(",;:，；：") + "…"


def _status(page, lang: str, files) -> str:
    parts = []
    entry = _verified().get(_english_source(page))
    if entry and entry["count"]:
        words = TEXT[lang]
        target = ("" if lang == "en" else f"{lang}/") + "compatibility/"
        href = get_relative_url(target, page.url) + "#by-page"
        parts.append(
            f'<a href="{href}">{html.escape(words["verified"].format(**entry))}</a>'
            + html.escape(words["tested"].format(**entry))
            + (html.escape(words["examples"]) if entry["examples"] else "")
        )
    if lang == "zh":
        pair = _translations().get(f"docs/{page.file.src_uri}")
        if pair is not None:
            english = page.url[len("zh/"):] if page.url.startswith("zh/") else page.url
            href = get_relative_url(english, page.url)
            if pair.since:
                date = pair.since[0].split()[1]
                parts.append(SYNC["behind"].format(count=len(pair.since), date=date, href=href))
            elif pair.uncommitted or not pair.translated_at:
                parts.append(SYNC["uncommitted"].format(href=href))
            else:
                parts.append(SYNC["in_step"])
    if not parts:
        return ""
    return '<p class="guide-status">' + " ".join(parts) + "</p>"


def on_page_content(content, page, config, files):
    lang = _locale(page)
    date = last_update(page.file.src_uri)
    if date:  # Material's partials/source-file.html shows it at the foot, labelled "Last update"
        page.meta["git_revision_date_localized"] = f'<span class="guide-last-update">{date}</span>'
    if "description" not in page.meta:
        description = _description(content, lang)
        if description:
            page.meta["description"] = description
    entry = _verified().get(_english_source(page))
    if entry and entry["examples"]:
        ranges = entry["examples"]

        def label(match: re.Match) -> str:
            releases = ranges.get(match["name"])
            if releases is None:
                return match[0]
            title = html.escape(TEXT[lang]["range"].format(releases=releases))
            return (match[0][: -len("</span>")]
                    + f' <span class="guide-range" title="{title}">torch {releases}</span></span>')

        content = _TITLE_BAR.sub(label, content)
    status = _status(page, lang, files)
    if status:
        head, sep, rest = content.partition("</h1>")
        content = head + sep + status + rest if sep else status + content
    return content
