"""Committed files made from the snippets and torch, so no figure or notebook is typed:
notebook (docs/notebooks from the outlines in notebooks/), toy_graph, grad_cam_figure,
grad_norm_figure (docs/assets/*.svg), social_card (docs/assets/social-card.png).
`make generate` runs all but the social card (`make social-card`: Chromium and a Chinese font);
tests/test_generated.py fails when a notebook or figure is out of date. The cost page's chart is
drawn with its tables by tools/measure/benchmark.
May import: tools.snippets, tools.dev.
"""
