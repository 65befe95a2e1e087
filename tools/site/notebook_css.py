"""Trim the stylesheet nbconvert inlines into every notebook page to the rules the page uses.

mkdocs-jupyter inlines JupyterLab's whole stylesheet (about 570 KB) into each notebook page; on a
phone on a slow network that alone delays the first paint by seconds. A rule stays when each class
its selector names occurs in the page (one selector of a list is enough); at-rules are trimmed the
same way inside; custom properties stay when something that stays uses them. The page's own markup
is untouched.
"""

from __future__ import annotations

import re

_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_VAR_USE = re.compile(r"var\(\s*(--[\w-]+)")
_STYLE = re.compile(r"<style[^>]*>(?P<css>.*?)</style>", re.DOTALL)
_CLASS_ATTR = re.compile(r'class="([^"]*)"')


def _blocks(css: str) -> list[tuple[str, str | None]]:
    """Top-level (prelude, body) pairs; body is what stands between the braces. Strings and
    comments are skipped; a statement without a body (@charset ...;) has body None."""
    out, i, start, n = [], 0, 0, len(css)
    while i < n:
        c = css[i]
        if c == "/" and css.startswith("/*", i):
            end = css.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and css[j] != c:
                j += 2 if css[j] == "\\" else 1
            i = j + 1
            continue
        if c == ";":  # a statement: @charset, @import
            if css[start:i].strip():
                out.append((css[start:i].strip(), None))
            start = i = i + 1
            continue
        if c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                if css[j] in "\"'":
                    quote, j = css[j], j + 1
                    while j < n and css[j] != quote:
                        j += 2 if css[j] == "\\" else 1
                elif css.startswith("/*", j):
                    end = css.find("*/", j + 2)
                    j = n - 1 if end < 0 else end + 1
                elif css[j] == "{":
                    depth += 1
                elif css[j] == "}":
                    depth -= 1
                j += 1
            out.append((css[start:i].strip(), css[i + 1 : j - 1]))
            start = i = j
            continue
        i += 1
    return out


def _selector_used(selector: str, classes: set[str]) -> bool:
    """Every class the selector requires is on the page (classes under :not() are not required)."""
    required = re.sub(r":not\((?:[^()]|\([^()]*\))*\)", "", selector)
    return all(name in classes for name in _CLASS.findall(required))


def _trim(css: str, classes: set[str]) -> list[tuple[str, str | None]]:
    kept = []
    for prelude, body in _blocks(css):
        if body is None:
            if not prelude.startswith("@charset"):
                kept.append((prelude, None))
        elif prelude.startswith(("@media", "@supports", "@layer")):
            inner = _trim(body, classes)
            if inner:
                kept.append((prelude, _render(inner)))
        elif prelude.startswith("@"):  # @keyframes, @font-face, @page: small, kept whole
            kept.append((prelude, body))
        elif any(_selector_used(s, classes) for s in prelude.split(",")):
            kept.append((prelude, body))
    return kept


def _render(rules: list[tuple[str, str | None]]) -> str:
    return "".join(f"{p};" if b is None else f"{p}{{{b}}}" for p, b in rules)


# A custom property's value may hold parentheses, and semicolons inside them (data: URLs).
_DECLARATION = re.compile(r"(?<=[{;])\s*(--[\w-]+)\s*:((?:[^;{}()]|\((?:[^()]|\([^()]*\))*\))*)(;|(?=}))")


def _drop_unused_properties(css: str) -> str:
    """Remove declarations of custom properties (--x: ...) that nothing kept uses, directly or
    through another property."""
    values: dict[str, list[str]] = {}
    for name, value, _ in _DECLARATION.findall(css):
        values.setdefault(name, []).append(value)
    used, queue = set(), _VAR_USE.findall(_DECLARATION.sub("", css))
    while queue:
        name = queue.pop()
        if name not in used:
            used.add(name)
            queue += [ref for value in values.get(name, []) for ref in _VAR_USE.findall(value)]
    trimmed = _DECLARATION.sub(lambda m: m.group(0) if m.group(1) in used else "", css)
    return re.sub(r"(?<=[{}])[^{}@]+\{\s*\}", "", trimmed)  # rules left empty


_PYGMENTS = "td.linenos .normal"  # in nbconvert's two copies of Pygments' default colours


def trim_page(html: str) -> str:
    """The notebook page with each inline stylesheet trimmed to the rules the page uses.

    nbconvert's own Pygments colours go (one copy is a Python list printed into a <style>):
    the code cells take Material's, as every other code block of the site does, with its
    contrast and its dark scheme.
    """
    html = _STYLE.sub(lambda m: "" if _PYGMENTS in m["css"] else m.group(0), html)
    html = html.replace('class="highlight-ipynb ', 'class="highlight highlight-ipynb ')
    classes = {name for attr in _CLASS_ATTR.findall(html) for name in attr.split()}

    def trim(match: re.Match) -> str:
        css = match["css"]
        if len(css) < 20_000:  # Pygments' colours and the small fixes: kept as they are
            return match.group(0)
        return f"<style>{_drop_unused_properties(_render(_trim(css, classes)))}</style>"

    return _STYLE.sub(trim, html)
