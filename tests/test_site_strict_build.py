"""The strict build must fail, naming the file, when the guide is broken.

tests/built_site.py builds a small project with the site's own configuration (its plugins, hooks,
validation and languages) over short pages, broken three ways (its MUTATIONS) in one build: the
strict build fails naming each file, and for no other reason. A missing snippet is an error
raised by pymdownx.snippets itself: test_missing_snippet_fails_the_build renders one through the
project's own configuration, which costs milliseconds instead of a build.
"""

from __future__ import annotations

import pytest

from tests.built_site import MUTATIONS, builds  # noqa: F401  (the session's mutated build)
from tools.snippets import ROOT


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_strict_build_fails_naming_the_file(builds, mutation):
    named, _ = MUTATIONS[mutation]
    _, result = builds["broken"]
    log = result.stdout + result.stderr
    lines = log.splitlines()
    flagged = [line for line in lines if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode != 0, f"the strict build passed although {named} is broken:\n{log}"
    assert any(named in line for line in flagged), f"no warning or error names {named}:\n{log}"
    # It failed because of the breakages, not for another reason (a crash, an unrelated warning).
    caused = [n for n, _ in MUTATIONS.values()]
    unrelated = [line for line in flagged if not any(n in line for n in caused)]
    if "Traceback (most recent call last)" in log:
        unrelated += [line for line in lines[-1:] if not any(n in line for n in caused)]
    assert not unrelated, "the build also failed for other reasons:\n" + "\n".join(unrelated)


def test_missing_snippet_fails_the_build():
    import markdown
    from mkdocs.config import load_config
    from pymdownx.snippets import SnippetMissingError

    config = load_config(str(ROOT / "mkdocs.yml"))
    options = config["mdx_configs"]["pymdownx.snippets"]
    assert options.get("check_paths") is True, "mkdocs.yml must set pymdownx.snippets check_paths: true"
    renderer = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": options})
    assert "retain_grad" in renderer.convert('--8<-- "shared/retain_grad.md"\n'), "an existing snippet was not included"
    with pytest.raises(SnippetMissingError, match="no_such_snippet.md"):
        renderer.convert('--8<-- "no_such_snippet.md"\n')
