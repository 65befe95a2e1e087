"""Measurements behind the guide's cost claims: `make benchmark` (benchmark, training_cost:
the cost page's tables) and `make lighthouse` (page scores). Never run by the asserting tests.
May import: tools.snippets, tools.dev.
"""
