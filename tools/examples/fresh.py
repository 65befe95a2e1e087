"""Process state that an example or an import changes for every later example sharing the process,
restored as a reader's new process has it. The tests run a page's examples one document after
another in one process, and the browser job runs copied transcripts in one warmed runner: without
this, what one library does at import decides what another page's example prints.

- Dynamo's caches: compiled code is kept per function (nn.Linear.forward is one function for every
  Linear), and past its recompile limit Dynamo runs it uncompiled.
- Print options: importing ultralytics sets NumPy's float format and torch's line width.
- transformers' logging: importing transformer_lens sets the logger to errors only, a library run
  under CI=true turns its propagation on, and `warning_once` remembers what it logged.
- Root handlers that a library's `basicConfig()` added.
"""

from __future__ import annotations

import logging
import sys


def _print_options() -> tuple[dict, dict]:
    import numpy
    import torch

    opts = torch._tensor_str.PRINT_OPTS
    return ({"precision": opts.precision, "threshold": opts.threshold, "edgeitems": opts.edgeitems,
             "linewidth": opts.linewidth, "sci_mode": opts.sci_mode}, numpy.get_printoptions())


# Taken when this module is first imported, before any example runs.
_TORCH_PRINT, _NUMPY_PRINT = _print_options()
_ROOT_HANDLERS, _ROOT_LEVEL = list(logging.getLogger().handlers), logging.getLogger().level


def as_in_a_new_process() -> None:
    import torch

    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()
    torch.set_printoptions(**_TORCH_PRINT)
    if "numpy" in sys.modules:
        sys.modules["numpy"].set_printoptions(**_NUMPY_PRINT)
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity(hf_logging._get_default_logging_level())
        hf_logging.disable_propagation()
    warning_once = getattr(logging.Logger, "warning_once", None)  # an lru_cache, set by transformers
    if warning_once is not None and hasattr(warning_once, "cache_clear"):
        warning_once.cache_clear()
    root = logging.getLogger()
    for handler in root.handlers[:]:
        if handler not in _ROOT_HANDLERS:
            root.removeHandler(handler)
    root.setLevel(_ROOT_LEVEL)
