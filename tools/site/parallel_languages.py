"""Both languages built at once: `mkdocs build` forks the Chinese pass as soon as the English
pass has cleaned the site folder, and the two run side by side on two cores (the strict build on
the 2-core machine, 2026-11-29: 12.4-13.5 s one after the other, 8.7-10.5 s side by side; a
`diff -r` of the two sites found no file that differs).

mkdocs-static-i18n builds the languages one after the other: the default language's `build()`,
then, from its on_post_build, one nested `build()` per other language, with i18n's `building`
flag set and the site folder's cleaning switched off. Here the forked process runs exactly that
nested build (the same function, flag and cleaning) and hands back what the parent's later steps
read from it: the search entries i18n gathers from each pass, each language's 404 page
(tools/site/plugin_fixes.py), and the files it wrote outside its own folder (the sitemap), which
the parent writes again after its own pass, as the serial order leaves them. The parent's i18n
loop then waits for it instead of building, and runs every plugin's on_config for that language
as the nested build would have, so the final steps (i18n's merged search index, plugin_fixes'
per-language sitemaps and indexes) see the same state. A warning in the forked pass fails it in
strict mode, and the parent stops with the same Abort. jieba's "Loading model" messages are left
out of the log.

Only for `mkdocs build` (not `serve`, whose server threads do not survive a fork) and where fork
exists; GUIDE_SERIAL_BUILD=1 builds one language after the other as i18n does.
"""

from __future__ import annotations

import gzip
import logging
import os
import pickle
import sys
import tempfile
import traceback

import mkdocs_static_i18n.plugin as i18n_plugin
from mkdocs import utils
from mkdocs.exceptions import Abort
from mkdocs.plugins import event_priority

log = logging.getLogger("mkdocs.hooks.parallel_languages")

_BUILD = getattr(i18n_plugin.build, "__wrapped__", i18n_plugin.build)  # mkdocs' own build()
_FORKED: dict[str, tuple[int, str]] = {}  # language -> (process id, file of what it hands back)
_MINE: dict[str, bytes] = {}  # path -> the sitemap this process's pass wrote there


def _enabled() -> bool:
    return (hasattr(os, "fork") and sys.argv[1:2] == ["build"] and "--dirty" not in sys.argv
            and os.environ.get("GUIDE_SERIAL_BUILD") != "1")


@event_priority(100)  # first: right after the default language's pass cleaned the site folder
def on_files(files, config):
    i18n = config.plugins.get("i18n")
    if not _enabled() or i18n is None or i18n.building or _FORKED:
        return files
    _load_jieba()
    for language in [lang for lang in i18n.build_languages if lang != i18n.current_language]:
        handle, result = tempfile.mkstemp(prefix=f"guide-build-{language}-", suffix=".pickle")
        os.close(handle)
        sys.stdout.flush(), sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the language's pass, as i18n's on_post_build would run it
            code = 1
            try:
                _build_alone(config, i18n, language, result)
                code = 0
            except Abort as abort:  # strict mode's "Aborted with N warnings": say which pass
                print(f"Aborted in the {language} pass: {abort}", file=sys.stderr)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush(), sys.stderr.flush()
                os._exit(code)
        _FORKED[language] = (pid, result)
    i18n_plugin.build = _wait_or_build
    write_file = utils.write_file  # the sitemap this pass writes, which the forked pass may overwrite

    def remembering(content, path):  # noqa: E306
        if str(path).endswith("sitemap.xml"):
            _MINE[os.path.abspath(path)] = content
        return write_file(content, path)

    remembering.__wrapped__ = write_file
    utils.write_file = remembering
    return files


def _load_jieba() -> None:
    """Material's search segments Chinese text with jieba, whose dictionary takes 0.6 s to load.
    Only the Chinese pass cuts, and only the runs that tools/site/search_text.py has not kept
    from the last build: jieba loads its dictionary there, at the first such run, if any. Its
    "Loading model" messages are left out of the log here, before the fork."""
    try:
        import jieba
    except ImportError:
        return
    jieba.setLogLevel(logging.INFO)


def _plugin_fixes(config):
    """The hook module tools/site/plugin_fixes.py as MkDocs loaded it (not `tools.site.plugin_fixes`)."""
    return next(module for name, module in config["hooks"].items() if name.endswith("plugin_fixes.py"))


def _build_alone(config, i18n, language: str, result: str) -> None:
    plugin_fixes = _plugin_fixes(config)
    i18n.building = True
    utils.clean_directory = lambda directory: directory
    i18n.current_language = language
    for prefix in ("Documentation built in", "Building documentation to directory"):
        logging.getLogger("mkdocs.commands.build").addFilter(
            lambda record, prefix=prefix: not record.getMessage().startswith(prefix))
    written, stamps = _recording()
    before = len(i18n.search_entries)
    _BUILD(config, dirty=False)
    # Files this pass wrote outside its own folder (the sitemap): in i18n's order this pass wrote
    # them after the default language's, so the parent writes them again once its pass is done.
    site, own = os.path.abspath(config.site_dir), os.path.join(os.path.abspath(config.site_dir), language, "")
    shared = {path: content for path, content in written.items() if path.startswith(site) and not path.startswith(own)}
    with open(result, "wb") as handed:
        pickle.dump({"search_entries": i18n.search_entries[before:], "shared": shared,
                     "sitemap_mtime": stamps[-1] if stamps else None,
                     "not_found": {language: plugin_fixes._not_found.get(language)}}, handed)


def _recording() -> tuple[dict[str, bytes], list[int]]:
    """What this pass writes through MkDocs (path -> bytes) and the sitemap's gzip timestamps, kept
    as written: the parent writes the same shared paths at the same time, so reading them back from
    disk could give its content (a sitemap listing the English pages twice and no Chinese one)."""
    written: dict[str, bytes] = {}
    stamps: list[int] = []
    write_file, timestamp = utils.write_file, utils.get_build_timestamp

    def recording_write(content, path):
        written[os.path.abspath(path)] = content
        return write_file(content, path)

    def recording_timestamp(**kwargs):  # MkDocs calls it for the sitemap's .gz only
        stamps.append(timestamp(**kwargs))
        return stamps[-1]

    utils.write_file, utils.get_build_timestamp = recording_write, recording_timestamp
    return written, stamps


def _wait_or_build(config, dirty: bool = False, **kwargs) -> None:
    """i18n's nested build of one language: the forked pass's result, or a build here."""
    plugin_fixes = _plugin_fixes(config)
    i18n = config.plugins["i18n"]
    language = i18n.current_language
    if language not in _FORKED:
        return _BUILD(config, dirty=dirty, **kwargs)
    pid, result = _FORKED.pop(language)
    try:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise Abort(f"the {language} pass of the build failed (its messages are above)")
        with open(result, "rb") as handed:
            state = pickle.load(handed)
    finally:
        os.unlink(result)
        if not _FORKED:
            i18n_plugin.build = _BUILD
            utils.write_file = getattr(utils.write_file, "__wrapped__", utils.write_file)
    for path, content in state["shared"].items():
        if path.endswith("sitemap.xml"):
            content = _sitemap(path, content, state["sitemap_mtime"])
        with open(path, "wb") as file:
            file.write(content)
    config.plugins.on_config(config)  # the config as the nested pass left it
    i18n.search_entries.extend(state["search_entries"])
    plugin_fixes._not_found.update({k: v for k, v in state["not_found"].items() if v is not None})


def _sitemap(path: str, theirs: bytes, mtime: int | None) -> bytes:
    """The sitemap as the serial order writes it: i18n's template lists the pages of every language
    built so far, so the last pass's lists the default language's <url> entries, then its own. A
    pass forked before the default language's pages existed lists its own: the parent's come first.
    Gzipped as MkDocs does, with the forked pass's timestamp."""
    mine = _MINE.pop(path).decode("utf-8")
    text = theirs.decode("utf-8")
    head, _, their_urls = text.partition("    <url>")
    _, _, my_urls = mine.partition("    <url>")
    merged = (head + "    <url>" + my_urls.rpartition("</urlset>")[0] + "    <url>"
              + their_urls.rpartition("</urlset>")[0] + "</urlset>").encode("utf-8")
    if mtime is not None:
        with open(path + ".gz", "wb") as file, gzip.GzipFile(
                fileobj=file, filename=path + ".gz", mode="wb", mtime=mtime) as gz:
            gz.write(merged)
    return merged
