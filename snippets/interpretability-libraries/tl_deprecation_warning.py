"""The warning TransformerLens 3.9 gives when a HookedTransformer is built, and the line it names
(a script: its message contains "(...)", which a >>> transcript's output cannot hold)."""

import os
import warnings

import torch
from transformer_lens import HookedTransformer, HookedTransformerConfig

torch.manual_seed(0)
cfg = HookedTransformerConfig(n_layers=2, d_model=16, n_heads=2, d_head=8, d_vocab=50, n_ctx=8, act_fn="gelu")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = HookedTransformer(cfg)  # random weights, nothing downloaded
for warning in caught:  # the file it names: this script's, whatever its name
    named = "this script" if os.path.abspath(warning.filename) == os.path.abspath(__file__) else warning.filename
    print(f"{named}: {warning.category.__name__}: {warning.message}")
