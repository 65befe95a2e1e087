"""The Questions page: real questions, each answered by a section that exists in both languages,
drawn from one data file (snippets/questions/questions.yml) and never typed twice."""

import re
from collections import Counter

import pytest

from tests.test_chinese_typography import findings
from tools.generate import questions
from tools.snippets import DOCS

DATA = questions.load()
ANSWERED = questions.answered(DATA)
THEMES = {theme["id"] for theme in DATA["themes"]}


def test_there_are_enough_real_questions_in_both_languages():
    asked = Counter(q["asked_in"] for q in ANSWERED)
    assert len(ANSWERED) >= 150, f"{len(ANSWERED)} answered questions on the page; the guide promises at least 150"
    assert asked["zh"] >= 40, f"{asked['zh']} answered questions from Chinese sources; at least 40"


def test_every_question_has_a_source_a_theme_and_both_languages():
    problems = []
    for q in DATA["questions"]:
        where = f"snippets/questions/questions.yml [{q.get('id')}]"
        if q.get("theme") not in THEMES:
            problems.append(f"{where}: theme {q.get('theme')!r} is not one of the themes")
        if not re.match(r"https?://", q.get("source", "")):
            problems.append(f"{where}: no source link")
        if q.get("asked_in") not in questions.LANGUAGES:
            problems.append(f"{where}: asked_in must be en or zh")
        for lang in questions.LANGUAGES:
            if not (q.get(lang, {}).get("question", "").strip() and q.get(lang, {}).get("answer", "").strip()):
                problems.append(f"{where}: no {lang} question or answer")
        if q.get("shows", "mechanism") != "mechanism":
            problems.append(f"{where}: shows must be 'mechanism' (the link shows the mechanism, not the case) or absent")
        if not q.get("anchor") and not q.get("topic"):
            problems.append(f"{where}: neither an anchor (its answer) nor a topic (what to write)")
    assert not problems, "\n".join(problems)


def test_ids_and_sources_are_unique():
    for key in ("id", "source"):
        twice = [value for value, n in Counter(q[key] for q in DATA["questions"]).items() if n > 1]
        assert not twice, f"snippets/questions/questions.yml: the same {key} twice: {twice}"


@pytest.mark.parametrize("lang", questions.LANGUAGES)
def test_every_answer_links_to_a_section_of_that_language(lang):
    missing = [f"{q['id']}: {q['anchor']}" for q in ANSWERED if not questions.section_title(q["anchor"], lang)]
    assert not missing, f"no such section in the {lang} pages (docs/): " + ", ".join(missing)


@pytest.mark.parametrize("lang", questions.LANGUAGES)
def test_the_lists_are_the_ones_the_data_gives(lang):
    path = questions.FOLDER / f"{lang}.md"
    assert path.read_text(encoding="utf-8") == questions.render(DATA, lang), (
        f"{path.relative_to(DOCS.parent)} is not what questions.yml gives: run `python -m tools.generate.questions`")


def test_a_link_to_the_mechanism_says_so_in_both_languages():
    q = {**ANSWERED[0], "shows": "mechanism"}
    for lang in questions.LANGUAGES:
        plain = questions.render({**DATA, "questions": [ANSWERED[0]]}, lang)
        marked = questions.render({**DATA, "questions": [q]}, lang)
        assert questions.WORDS[lang]["mechanism"] in marked and questions.WORDS[lang]["mechanism"] not in plain


def test_the_list_check_can_fail():
    changed = {**DATA, "questions": [q for q in DATA["questions"] if q is not ANSWERED[0]]}
    assert questions.render(changed, "en") != questions.render(DATA, "en")


def test_the_chinese_list_reads_as_chinese_typography_wants():
    found = findings(questions.FOLDER / "zh.md", "snippets/questions/zh.md")
    assert not found, "autocorrect suggests changes (fix them in questions.yml):\n" + "\n".join(found)


def test_the_page_links_from_the_decision_page_and_home():
    for page in ("decision.md", "decision.zh.md", "index.md", "index.zh.md"):
        assert "questions.md" in (DOCS / page).read_text(encoding="utf-8"), f"docs/{page} does not link the Questions page"


def test_the_chinese_list_uses_the_glossary_terms():
    from tests.test_structure import avoided_terms_in

    text = re.sub(r"`[^`\n]*`", "", (questions.FOLDER / "zh.md").read_text(encoding="utf-8"))
    found = avoided_terms_in(text)
    assert not found, "snippets/questions/zh.md (from questions.yml): " + ", ".join(found)
