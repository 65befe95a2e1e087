"""MkDocs hook: what a reader learns about a page before reading it (registered in mkdocs.yml).

1. "Verified on torch 2.4.1–2.15.0 (12 of 12 releases tested), 2026-11-24" under the title of every
   page with examples, from snippets/compatibility/verified.json, which `python -m tools.examples.compat`
   writes from the matrix results (never typed). An example that printed the page's output on
   fewer releases (snippets/versions.toml) shows its own range in its title bar. While an example
   is pending the matrix (new or changed since it ran: tools/snippets/results.py), the page
   vouches for the pinned release only, and the example's title bar says it is pending.
2. On a Chinese page: whether the translation is in step with the English page, from git, as
   `make translation-status` reports it (tools/site/translation_status.py).
3. The date of the last commit that changed the page's source, which Material shows at the foot
   of the page as "Last update" (the key its template reads is the one the
   git-revision-date-localized plugin fills; that plugin finds no history with Debian 12's git
   2.39, whose `git log --diff-filter=r` lists nothing, so one `git log` here does it). A page not
   committed yet shows the build's date; a build outside a git checkout shows none.
4. A description for the page's meta tags (search results, shared links): its front matter's, or
   its first paragraph, HTML-escaped for the templates that write it into an attribute.
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

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # MkDocs loads hooks by path
    sys.path.insert(0, str(ROOT))
from tools.site.translation_status import pairs  # noqa: E402

VERIFIED = ROOT / "snippets" / "compatibility" / "verified.json"
DESCRIPTION_LENGTH = {"en": 200, "zh": 100}  # characters; Chinese packs more into each

TEXT = {
    "en": {
        "verified": "Verified on torch {releases}",
        "tested": ": passed on {count} of the {tested} releases tested, on {date}.",
        "guide": "The guide's examples are verified on torch {releases}",
        "guide_tested": ": all {guide} ran on each of the {tested} releases tested, on {date}; each page shows its own range.",
        "differs": " On torch {differs} its examples print something else; the page says what.",
        "fails": " On torch {fails} an example fails: see the compatibility page.",
        "examples": " {n} of the page's {total} examples print its output on fewer releases; each shows its own range.",
        "range": "Prints this output on torch {releases}; the page says what differs on the others",
        "pending": "Verified on torch {pinned}",
        "pending_tested": ", the pinned release, on which the tests run every example."
                          " {n} of the page's {total} examples {verb} new or changed since the torch matrix last ran:"
                          " the other releases are pending until it runs again (CI runs it weekly).",
        "guide_pending": ", the pinned release, on which the tests run every example;"
                         " {n} of its {guide} examples are pending the torch matrix on the other releases.",
        "bar": "pending the matrix",
        "bar_title": "New or changed since the torch matrix last ran: verified on torch {pinned} only, for now",
    },
    "zh": {
        "verified": "已在 torch {releases} 上验证",
        "tested": "：测试的 {tested} 个版本中通过 {count} 个，运行于 {date}。",
        "guide": "本指南的示例已在 torch {releases} 上验证",
        "guide_tested": "：全部 {guide} 个示例在测试的 {tested} 个版本上都运行过，运行于 {date}；各页标出自己的版本范围。",
        "differs": "在 torch {differs} 上示例的输出不同，正文有说明。",
        "fails": "在 torch {fails} 上有示例失败，见兼容性页面。",
        "examples": "{total} 个示例中有 {n} 个只在部分版本上输出与本页相同，代码块标题栏标出各自的版本范围。",
        "range": "在 torch {releases} 上输出与此相同；其他版本的差异见正文",
        "pending": "已在 torch {pinned} 上验证",
        "pending_tested": "（固定版本，测试会在这个版本上运行每一个示例）。本页 {total} 个示例中有 {n} 个是在版本矩阵上次运行之后新加或修改的："
                          "其他版本上的结果要等版本矩阵再次运行（CI 每周运行一次）。",
        "guide_pending": "（固定版本，测试会在这个版本上运行每一个示例）；{guide} 个示例中有 {n} 个在其他版本上尚待版本矩阵运行。",
        "bar": "待版本矩阵运行",
        "bar_title": "在版本矩阵上次运行之后新加或修改：目前只在 torch {pinned} 上验证",
    },
}
SYNC = {
    "in_step": "译文与英文原文同步。",
    "behind": "英文原文在本译文之后有 {count} 次修改（最近一次 {date}），请以<a href=\"{href}\">英文原文</a>为准。",
    "uncommitted": "英文原文有尚未提交的修改，请以<a href=\"{href}\">英文原文</a>为准。",
    "new": "译文尚未提交，无法与英文原文比对。",
}


@lru_cache(maxsize=1)
def _verified() -> dict:
    return json.loads(VERIFIED.read_text(encoding="utf-8")) if VERIFIED.exists() else {}


@lru_cache(maxsize=1)
def _translations() -> dict:
    """docs/<page>.zh.md -> its Pair; {} without the history (see has_history)."""
    if not has_history():
        return {}
    return {pair.chinese: pair for pair in pairs(ROOT)}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


@lru_cache(maxsize=1)
def has_history() -> bool:
    """A git checkout with its whole history. A shallow clone (actions/checkout's default depth
    of 1) would date every page at its one commit and find no translation behind: neither is
    shown then."""
    try:
        return _git("rev-parse", "--is-shallow-repository").strip() == "false"
    except (OSError, subprocess.CalledProcessError):
        return False


@lru_cache(maxsize=1)
def _last_commits() -> dict[str, str] | None:
    """docs/... and snippets/... path -> date (YYYY-MM-DD) of the newest commit that changed it;
    None without the history."""
    if not has_history():
        return None
    log = _git("log", "--format=%x00%cs", "--name-only", "--", "docs", "snippets")
    dates: dict[str, str] = {}
    for entry in log.split("\0")[1:]:
        date, *names = entry.strip().split("\n")
        for name in filter(None, names):
            dates.setdefault(name, date)
    return dates


INCLUDE = re.compile(r'^\s*--8<-- "(?P<name>[^"]+)"', re.MULTILINE)


def sources(page_path: Path) -> list[str]:
    """What a reader sees on the page comes from: its source, and the snippet files it includes
    (a script's expected output with it). Paths relative to the repository."""
    found = [page_path.relative_to(ROOT).as_posix()]
    if page_path.suffix == ".md":
        for name in INCLUDE.findall(page_path.read_text(encoding="utf-8")):
            found.append(f"snippets/{name}")
            if name.endswith(".py"):
                found.append(f"snippets/{name[:-3]}.out")
    return found


def last_update(page_path: Path) -> str | None:
    """The newest commit date among the page's sources; today for a source not committed yet."""
    dates = _last_commits()
    if dates is None:
        return None
    today = time.strftime("%Y-%m-%d", time.gmtime())
    return max(dates.get(source, today) for source in sources(page_path))


def localized(entry: dict | None, lang: str) -> dict | None:
    """verified.json's entry with its release lists written as the language writes a list."""
    if entry is None or lang != "zh":
        return entry
    def fix(value: str) -> str:
        return value.replace(", ", "、")

    return {key: fix(value) if isinstance(value, str) else
            {k: fix(v) for k, v in value.items()} if isinstance(value, dict) else value
            for key, value in entry.items()}


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
    entry = localized(_verified().get(_english_source(page)), lang)
    words = TEXT[lang]
    target = ("" if lang == "en" else f"{lang}/") + "compatibility/"
    href = get_relative_url(target, page.url) + "#by-page"
    if entry and entry.get("pending"):  # vouch for what ran: the pinned release, by the tests
        key = "guide_pending" if "guide" in entry else "pending_tested"
        count = len(entry["pending"])
        parts.append(f'<a href="{href}">{html.escape(words["pending"].format(**entry))}</a>'
                     + html.escape(words[key].format(n=count, verb="is" if count == 1 else "are", **entry)))
    elif entry and entry["count"]:
        guide = "guide" in entry
        text = (f'<a href="{href}">{html.escape(words["guide" if guide else "verified"].format(**entry))}</a>'
                + html.escape(words["guide_tested" if guide else "tested"].format(**entry)))
        if not guide:
            text += "".join(html.escape(words[key].format(**entry)) for key in ("differs", "fails") if entry[key])
            if entry["examples"]:
                text += html.escape(words["examples"].format(n=len(entry["examples"]), **entry))
        parts.append(text)
    if lang == "zh":
        pair = _translations().get(f"docs/{page.file.src_uri}")
        if pair is not None:
            english = page.url[len("zh/"):] if page.url.startswith("zh/") else page.url
            href = get_relative_url(english, page.url)
            if pair.since:
                date = pair.since[0].split()[1]
                parts.append(SYNC["behind"].format(count=len(pair.since), date=date, href=href))
            elif not pair.translated_at:
                parts.append(SYNC["new"])
            elif pair.uncommitted:
                parts.append(SYNC["uncommitted"].format(href=href))
            else:
                parts.append(SYNC["in_step"])
    if not parts:
        return ""
    return '<p class="guide-status">' + ("" if lang == "zh" else " ").join(parts) + "</p>"


def on_page_content(content, page, config, files):
    lang = _locale(page)
    date = last_update(Path(page.file.abs_src_path))
    if date:  # Material's partials/source-file.html shows it at the foot, labelled "Last update"
        page.meta["git_revision_date_localized"] = f'<span class="guide-last-update">{date}</span>'
    # Material writes page.meta.description into its meta tag as it is, unescaped: a quote in a
    # front-matter description ended the attribute. Kept escaped here, for every template.
    description = page.meta.get("description") or _description(content, lang)
    if description:
        plain = " ".join(html.unescape(_TAG.sub("", str(description))).split())
        page.meta["description"] = html.escape(plain, quote=True)
    entry = localized(_verified().get(_english_source(page)), lang)
    if entry and (entry["examples"] or entry.get("pending")):
        ranges, pending = entry["examples"], set(entry.get("pending", ()))

        def label(match: re.Match) -> str:
            words = TEXT[lang]
            if match["name"] in pending:
                title = html.escape(words["bar_title"].format(**entry))
                return (match[0][: -len("</span>")]
                        + f' <span class="guide-pending" title="{title}">{words["bar"]}</span></span>')
            releases = ranges.get(match["name"])
            if releases is None:
                return match[0]
            title = html.escape(words["range"].format(releases=releases))
            return (match[0][: -len("</span>")]
                    + f' <span class="guide-range" title="{title}">torch {releases}</span></span>')

        content = _TITLE_BAR.sub(label, content)
    status = _status(page, lang, files)
    if status:
        head, sep, rest = content.partition("</h1>")
        content = head + sep + status + rest if sep else status + content
    return content
