"""What runs inside `mkdocs build`: the MkDocs hooks registered in mkdocs.yml under `hooks:`, and
the modules they use.

Hooks: plugin_fixes (i18n, jupyter and Material fixes), page_status ("Verified on", last update),
llms (llms.txt and Markdown twins), page_speed (what a page loads), downloads (each page's
examples as .py/.ipynb, and check_guide.py), search_rank (a pasted error message finds its
pages), parallel_languages (both languages at once), highlight_cache and search_text (each code block
highlighted, each Chinese run cut, once). Used by them: notebook_css (trims the notebook
pages' stylesheet), translation_status (also `make translation-status`), disk_cache (.cache/,
for highlight_cache and search_text). A new hook is a module
here with its line under `hooks:`. No torch: the site installs without it.
May import: tools.snippets, tools.reader, tools.generate.notebook.
"""
