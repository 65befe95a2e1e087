"""The Questions page's lists, in each language, from one data file of questions users asked.

    python -m tools.generate.questions       # writes snippets/questions/en.md and zh.md

snippets/questions/questions.yml holds the themes and every question mined from public issue
trackers and Q&A pages: the question and a one-line answer in both languages, the source thread,
the language it was asked in, and the anchor (`page.md#anchor`) of the section whose executed
examples answer it. `shows: mechanism` marks an entry whose linked section shows the mechanism
behind the answer but not the case the question asks about (another model, another library): the
list says so after the link, so a reader does not expect the case itself there. An entry without an anchor is a question the guide does not answer yet: kept
in the data (its `topic` says what to write), left off the page. docs/questions.md and
docs/questions.zh.md include the list of their language; tests/test_questions.py checks the data,
every link in both languages, and that the lists are the ones the data gives.
"""

from __future__ import annotations

import re
from functools import lru_cache

import yaml

from tools.snippets import DOCS, SNIPPETS

FOLDER = SNIPPETS / "questions"
DATA = FOLDER / "questions.yml"
LANGUAGES = ("en", "zh")
HEADING = re.compile(r"^#{2,6} (?P<title>.+?)\s*\{[^}]*#(?P<anchor>[\w-]+)[^}]*\}\s*$", re.MULTILINE)
WORDS = {
    "en": {"asked": "asked in {language}", "languages": {"en": "English", "zh": "Chinese"}, "answer": "Answer",
           "mechanism": " (the section shows the mechanism, not this case)"},
    "zh": {"asked": "（原帖为{language}）", "languages": {"en": "英文", "zh": "中文"}, "answer": "解答",
           "mechanism": "（该节演示的是背后的机制，不是这个具体情形）"},
}


def load() -> dict:
    # libyaml's loader where PyYAML has it: the same data, parsed in C (the file has 4,000 lines)
    return yaml.load(DATA.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def answered(data: dict) -> list[dict]:
    return [q for q in data["questions"] if q.get("anchor")]


@lru_cache(maxsize=None)
def headings(page: str, lang: str) -> dict[str, str]:
    """Anchor -> heading text of docs/<page> in that language."""
    path = DOCS / (page if lang == "en" else page.replace(".md", ".zh.md"))
    if not path.exists():
        return {}
    fence = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
    text = fence.sub("", path.read_text(encoding="utf-8"))
    return {m["anchor"]: m["title"] for m in HEADING.finditer(text)}


def section_title(anchor: str, lang: str) -> str:
    page, _, name = anchor.partition("#")
    return headings(page, lang).get(name, "")


def _source_label(url: str) -> str:
    github = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)", url)
    if github:
        return f"{github[1]}#{github[2]}"
    host = re.match(r"https?://(?:www\.)?([^/:]+)", url)
    return host[1] if host else url


def render(data: dict, lang: str) -> str:
    words = WORDS[lang]
    entries = answered(data)
    parts = []
    for theme in data["themes"]:
        own = [q for q in entries if q["theme"] == theme["id"]]
        if not own:
            continue
        parts.append(f"## {theme[lang]} {{ #{theme['id']} }}\n")
        for q in own:
            title = section_title(q["anchor"], lang)
            source = f"[{_source_label(q['source'])}]({q['source']})"
            if q["asked_in"] != lang:  # "(asked in Chinese)"; a Chinese page brackets it full-width
                note = words["asked"].format(language=words["languages"][q["asked_in"]])
                source += note if lang == "zh" else f" ({note})"
            shows = words["mechanism"] if q.get("shows") == "mechanism" else ""
            parts.append(f"- **{q[lang]['question']}**\n"
                         f"  {q[lang]['answer']} → [{title}]({q['anchor']}){shows} · {source}\n")
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def write() -> list[str]:
    data = load()
    written = []
    for lang in LANGUAGES:
        path = FOLDER / f"{lang}.md"
        path.write_text(render(data, lang), encoding="utf-8")
        written.append(path.relative_to(SNIPPETS.parent).as_posix())
    return written


if __name__ == "__main__":
    for name in write():
        print(f"wrote {name}")
