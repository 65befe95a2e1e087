"""Committed files made from the snippets and torch, so no figure or notebook is typed:
notebook (docs/notebooks from the outlines in notebooks/), toy_graph, grad_cam_figure,
grad_norm_figure (docs/assets/*.svg), social_card (docs/assets/social-card.png).
`make generate` runs them; tests/test_generated.py fails when one is out of date.
May import: tools.snippets, tools.dev.
"""
