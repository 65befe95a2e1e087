"""Running the examples: what the tests, the refresher and the torch matrix share.

evaluate (run an example as a copied script runs it; compare with the page or a recorded
release), scripts (script snippets, and the distributed ones from one process through
distributed_runner), offline (no network during examples), refresh_outputs (`make outputs`:
rewrite expected outputs from a real run), compat (the matrix's results into the compatibility
page's data). Imports torch. May import: tools.snippets.
"""
