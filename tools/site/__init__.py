"""What runs inside `mkdocs build`: the MkDocs hooks registered in mkdocs.yml under `hooks:`, and
the two modules they use.

Hooks: plugin_fixes (i18n, jupyter and Material fixes), page_status ("Verified on", last update),
llms (llms.txt and Markdown twins), page_speed (what a page loads), downloads (each page's
examples as .py/.ipynb, and check_guide.py), search_rank (a pasted error message finds its
pages). Used by them: notebook_css (trims the notebook
pages' stylesheet), translation_status (also `make translation-status`). A new hook is a module
here with its line under `hooks:`. No torch: the site installs without it.
May import: tools.snippets, tools.reader, tools.generate.notebook.
"""
