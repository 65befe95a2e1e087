"""llms.txt, llms-full.txt and a Markdown twin of every page, in each language (a MkDocs hook).

Per llmstxt.org, each page has a Markdown version at its URL + `index.html.md` (the home page:
`/index.html.md`, the Chinese one `/zh/index.html.md`), and each language root has:

- `llms.txt`: `# site name`, `> description`, then one `## section` per nav section (the section
  names translated by i18n's `nav_translations`), listing `- [page H1](twin URL): description`;
- `llms-full.txt`: every twin, in nav order.

A twin is the page's Markdown source with each `--8<-- "name"` line replaced by the snippet it
includes (the pycon code and its expected output, as pymdownx.snippets inlines them), and links to
other pages and files made absolute (pages: their twins). A notebook's twin is its Markdown cells,
its code cells as ```python fences and each cell's saved output as a ```text fence.

Headings keep their `{ #anchor }`, which the links' fragments name.

Why no plugin: mkdocs-llmstxt (0.5.1) writes one `site/llms.txt`, which i18n's second (Chinese)
build pass overwrites; its sections are a fixed list of source files, untranslated; and its
HTML-to-Markdown conversion (BeautifulSoup, markdownify, mdformat) took about 5 s per language,
against a 7 s build. mkdocs-llmstxt-md (0.3.0) stores the Markdown before pymdownx.snippets runs,
so its twins keep the `--8<--` lines, and it writes one `site/llms.txt` too. Reading the source
here costs about 0.1 s for both languages and keeps each snippet byte for byte.

mkdocs-static-i18n builds each language in its own pass (the others nested in the default one's
on_post_build, priority -100); each pass collects its pages here and writes its own files in its
own on_post_build, before i18n starts the next pass.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from mkdocs.plugins import event_priority
from mkdocs.structure.nav import Section
from mkdocs.structure.pages import Page

TWIN = "index.html.md"  # llmstxt.org: a URL without a file name gets index.html.md appended

# The only words of the files not taken from the pages or mkdocs.yml; a language without an entry
# gets the English ones.
_WORDS = {
    "en": ("Each link below leads to the Markdown version of a page, with the code of its examples and "
           "their printed output inlined. All pages in one file: [llms-full.txt]({full}).",
           " Other languages: {others}."),
    "zh": ("下面每个链接都指向一个页面的 Markdown 版本，页面中示例的代码及其打印输出已直接写在其中。"
           "全部页面合为一个文件：[llms-full.txt]({full})。",
           "其他语言：{others}。"),
}

_INCLUDE = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<name>[^"]+)"[ \t]*$', re.MULTILINE)
_LINK = re.compile(  # [text](target "title"), ![alt](target); text may hold [brackets] and newlines
    r'(?P<text>!?\[(?:[^\[\]]|\[[^\[\]]*\])*\])\((?P<target>[^()\s]+)(?P<title>\s+"[^"]*")?\)'
)
_H1 = re.compile(r"^# (?P<title>.+?)(?:\s*\{[^}]*\})?\s*$", re.MULTILINE)

_pass: dict = {}  # the current build pass (one language): its nav, files and pages' twins


def _i18n(config):
    return config.plugins.get("i18n")


def _language(config) -> tuple[str, str]:
    """(this pass's language, its root relative to site_dir: '' or 'zh/')."""
    i18n = _i18n(config)
    if i18n is None:
        return config.theme.get("language") or "en", ""
    lang = i18n.current_language
    return lang, ("" if lang == i18n.default_language else f"{lang}/")


def _canonical(src_uri: str, config) -> str:
    """'cost.zh.md' -> 'cost.md': the name the pages link to, in every language."""
    i18n = _i18n(config)
    if i18n is None:
        return src_uri
    for lang in i18n.config.languages:
        src_uri = re.sub(rf"\.{re.escape(lang.locale)}(?=\.[^./]+$)", "", src_uri)
    return src_uri


@event_priority(-200)  # after i18n's on_nav (-100), which translates the section names
def on_nav(nav, config, files):
    lang, _ = _language(config)
    by_name = {}
    for file in files:
        name = _canonical(file.src_uri, config)
        # this language's file wins over the default one it would fall back to
        if name not in by_name or f".{lang}." in file.src_uri:
            by_name[name] = file
    _pass.clear()
    _pass.update(nav=nav, files=by_name, twins={})
    return nav


@event_priority(-200)  # the source as the other plugins leave it
def on_page_markdown(markdown, page, config, files):
    if not _pass:  # no on_nav ran in this build
        return markdown
    if page.file.src_uri.endswith(".ipynb"):
        text = _notebook_markdown(Path(page.file.abs_src_path))
    else:
        text = _links(_expand(markdown, page, config), page, config)
    title = _H1.search(text)
    _pass["twins"][page.file.src_uri] = {
        "title": title["title"] if title else (page.title or page.file.src_uri),
        # the front matter's description, else the first sentence (a notebook has no front matter)
        "description": " ".join(str(page.meta.get("description") or _first_sentence(text)).split()),
        "text": text.strip("\n") + "\n",
    }
    return markdown


def _expand(markdown: str, page, config, depth: int = 0) -> str:
    """Each `--8<-- "name"` line replaced by the file, indented as the line (pymdownx.snippets)."""
    options = config.mdx_configs.get("pymdownx.snippets", {})
    bases = options.get("base_path", ["."])
    bases = [bases] if isinstance(bases, str) else bases

    def include(match: re.Match) -> str:
        for base in bases:
            path = Path(str(base)) / match["name"]
            if path.is_file():
                text = path.read_text(encoding="utf-8").rstrip("\n")
                if depth < 5:
                    text = _expand(text, page, config, depth + 1)
                return "\n".join(match["indent"] + line if line else line for line in text.split("\n"))
        return match.group(0)  # pymdownx.snippets (check_paths) fails the build naming it

    return _INCLUDE.sub(include, markdown)


def _links(markdown: str, page, config) -> str:
    """Relative links to pages and files made absolute: a page's leads to its twin."""
    here = posixpath.dirname(_canonical(page.file.src_uri, config))
    base = config.site_url or "/"

    def absolute(match: re.Match) -> str:
        target = match["target"]
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not parts.path or target.startswith("/"):
            return match.group(0)
        file = _pass["files"].get(posixpath.normpath(posixpath.join(here, parts.path)))
        if file is None:  # not a file of the site: leave it as written
            return match.group(0)
        url = _twin_url(file.url) if file.is_documentation_page() else file.url
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        return f"{match['text']}({urljoin(base, url)}{fragment}{match['title'] or ''})"

    return _LINK.sub(absolute, markdown)


def _twin_url(page_url: str) -> str:
    """'zh/cost/' -> 'zh/cost/index.html.md'; '' -> 'index.html.md'; 'a.html' -> 'a.html.md'."""
    return page_url + TWIN if page_url == "" or page_url.endswith("/") else page_url + ".md"


def _notebook_markdown(path: Path) -> str:
    """Markdown cells as they are; code cells and their saved text output as fences."""
    blocks = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"]).strip("\n")
        if cell["cell_type"] == "markdown":
            blocks.append(source)
        elif cell["cell_type"] == "code":
            blocks.append(f"```python\n{source}\n```")
            printed = "".join(_output_text(output) for output in cell.get("outputs", []))
            if printed.strip():
                blocks.append(f"```text\n{printed.rstrip()}\n```")
    return "\n\n".join(blocks)


def _output_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    else:  # execute_result, display_data: their plain-text form; error: the traceback
        text = output.get("data", {}).get("text/plain", "") or "\n".join(output.get("traceback", []))
    return "".join(text) if isinstance(text, list) else text


def _first_sentence(markdown: str) -> str:
    """The first sentence of the first paragraph after the H1: a notebook has no front matter."""
    for block in re.split(r"\n\s*\n", markdown):
        block = block.strip()
        if block and not block.startswith(("#", "```", "--8<--", "|", "!", "<")):
            sentence = re.match(r"(.+?(?:[.!?](?=\s|$)|[。！？]))", " ".join(block.split()))
            return sentence.group(1) if sentence else " ".join(block.split())
    return ""


def _pages(items) -> list[Page]:
    found = []
    for item in items:
        if isinstance(item, Section):
            found.extend(_pages(item.children))
        elif isinstance(item, Page):
            found.append(item)
    return found


def on_post_build(config):  # priority 0: before i18n (-100) starts the next language's pass
    if not _pass:
        return
    lang, root = _language(config)
    site = Path(config.site_dir)
    base = config.site_url or "/"
    twins = _pass["twins"]

    sections = []  # (title, pages): nav sections, and a page at the top of the nav on its own
    for item in _pass["nav"].items:
        pages = [p for p in _pages([item]) if p.file.src_uri in twins]
        if pages:
            sections.append((item.title, pages))

    header = f"# {config.site_name}\n\n"
    if config.site_description:
        header += f"> {' '.join(config.site_description.split())}\n\n"
    index, full = [header + _details(config, lang, root)], [header]
    for title, pages in sections:
        index.append(f"## {title}\n\n")
        for page in pages:
            twin = twins[page.file.src_uri]
            target = site / _twin_url(page.url)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(twin["text"], encoding="utf-8")
            link_text = twin["title"].replace("[", r"\[").replace("]", r"\]")
            description = f": {twin['description']}" if twin["description"] else ""
            index.append(f"- [{link_text}]({urljoin(base, _twin_url(page.url))}){description}\n")
            full.append(f"<!-- {urljoin(base, page.url)} -->\n\n{twin['text']}\n")
        index.append("\n")
    (site / root).mkdir(parents=True, exist_ok=True)
    (site / root / "llms.txt").write_text("".join(index).rstrip("\n") + "\n", encoding="utf-8")
    (site / root / "llms-full.txt").write_text("".join(full).rstrip("\n") + "\n", encoding="utf-8")
    _pass.clear()


def _details(config, lang: str, root: str) -> str:
    base = config.site_url or "/"
    i18n = _i18n(config)
    others = []
    if i18n is not None:
        for language in i18n.config.languages:
            if language.locale != lang and language.build:
                other_root = "" if language.locale == i18n.default_language else f"{language.locale}/"
                others.append(f"[{language.name}]({urljoin(base, other_root + 'llms.txt')})")
    intro, other_languages = _WORDS.get(lang, _WORDS["en"])
    text = intro.format(full=urljoin(base, root + "llms-full.txt"))
    if others:
        text += other_languages.format(others=("、" if lang == "zh" else ", ").join(others))
    return text + "\n\n"
