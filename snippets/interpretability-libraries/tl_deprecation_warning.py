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
for warning in caught:
    print(f"{os.path.basename(warning.filename)}: {warning.category.__name__}: {warning.message}")
