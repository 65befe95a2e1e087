"""tools/site/translation_status.py on a throwaway repository: it must name a Chinese page exactly when
its English page changed after it."""

import subprocess

from tools.site.translation_status import git, pairs, report


def _commit(repo, message):
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", message)


def test_lists_the_chinese_pages_whose_english_page_moved_on(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text("# English\n")
        (docs / f"{name}.zh.md").write_text("# 中文\n")
    _commit(tmp_path, "both pages in both languages")
    assert [p.behind for p in pairs(tmp_path)] == [False, False]

    (docs / "a.md").write_text("# English\n\nA new paragraph.\n")
    _commit(tmp_path, "a: new paragraph")
    behind = {p.chinese: p for p in pairs(tmp_path) if p.behind}
    assert list(behind) == ["docs/a.zh.md"], behind
    assert [line.split(" ", 2)[2] for line in behind["docs/a.zh.md"].since] == ["a: new paragraph"]
    assert "docs/a.zh.md: 1 English commit(s)" in report(pairs(tmp_path))

    (docs / "a.zh.md").write_text("# 中文\n\n新的一段。\n")
    _commit(tmp_path, "a: translated")
    (docs / "b.md").write_text("# English, edited\n")  # not committed yet
    behind = [p.chinese for p in pairs(tmp_path) if p.behind]
    assert behind == ["docs/b.zh.md"], behind
    assert "docs/b.md has uncommitted changes" in report(pairs(tmp_path))
