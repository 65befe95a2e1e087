# check_guide.py, its part on running each snippet as in a new process: what an earlier example or
# import changed in this process, restored (tools/examples/fresh.py, which the tests use, is this
# part). tools/reader/checker.py joins the parts (its PARTS, in order) into that one file and leaves
# out this preamble; this part takes no name from the others.
from __future__ import annotations

# --- end of the preamble: check_guide.py goes on below ---

import logging  # noqa: E402  (the head part has no use for them)
import os  # noqa: E402
import sys  # noqa: E402

# --- Each snippet as in a new process -------------------------------------------------------
# The tests and check_guide.py run a page's examples one snippet after another in one process:
# without this, what one library does at import decides what another page's example prints.
# - Dynamo's caches: compiled code is kept per function (nn.Linear.forward is one function for
#   every Linear), and past its recompile limit Dynamo runs it uncompiled.
# - Print options: importing ultralytics sets NumPy's float format and torch's line width.
# - transformers' logging: importing transformer_lens sets the logger to errors only, a library
#   run under CI=true turns its propagation on, and `warning_once` remembers what it logged.
# - Root handlers that a library's `basicConfig()` added: each record of a logger that propagates
#   is printed once per handler (bitsandbytes' cast warning came out four times on torch 2.8).
# - torch.func's transform levels: on torch 2.4 a vmap over a compiled function that calls
#   autograd.grad (compile_vmap_autograd_grad) returned with a level still pushed, and every later
#   example printed GradTrackingTensor(lvl=1, ...) or raised "backward() called inside a functorch
#   transform". A new process starts with none.

_PRISTINE: dict = {}  # the state before the first example, taken at the first call


def _print_options() -> tuple[dict, dict | None]:
    import torch

    opts = torch._tensor_str.PRINT_OPTS
    numpy = sys.modules.get("numpy")  # torch imports it where it is installed
    return ({"precision": opts.precision, "threshold": opts.threshold, "edgeitems": opts.edgeitems,
             "linewidth": opts.linewidth, "sci_mode": opts.sci_mode},
            numpy.get_printoptions() if numpy is not None else None)


def as_in_a_new_process() -> None:
    """Call before each snippet's first example (the first call, before any example, takes the
    state to restore)."""
    import torch

    root = logging.getLogger()
    if not _PRISTINE:
        torch_print, numpy_print = _print_options()
        _PRISTINE.update(torch_print=torch_print, numpy_print=numpy_print,
                         handlers=list(root.handlers), level=root.level, path=list(sys.path))
    # a module the snippet wrote and imported from a folder it put on sys.path: a new process
    # imports it again, running its module-level code (pitfall_grad_mode_off_at_import's does)
    added = [os.path.join(folder, "") for folder in sys.path if folder and folder not in _PRISTINE["path"]]
    if added:
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(tuple(added)):
                del sys.modules[name]
        sys.path[:] = _PRISTINE["path"]
    if sys.modules.get("torch._dynamo") is not None:
        sys.modules["torch._dynamo"].reset()
    torch.set_printoptions(**_PRISTINE["torch_print"])
    if _PRISTINE["numpy_print"] is not None:
        sys.modules["numpy"].set_printoptions(**_PRISTINE["numpy_print"])
    hf_logging = sys.modules.get("transformers.utils.logging")  # where an example imported transformers
    if hf_logging is not None:
        hf_logging.set_verbosity(hf_logging._get_default_logging_level())
        hf_logging.disable_propagation()
    warning_once = getattr(logging.Logger, "warning_once", None)  # an lru_cache, set by transformers
    if warning_once is not None and hasattr(warning_once, "cache_clear"):
        warning_once.cache_clear()
    for handler in root.handlers[:]:
        if handler not in _PRISTINE["handlers"]:
            root.removeHandler(handler)
    root.setLevel(_PRISTINE["level"])
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is not None and hasattr(functorch, "get_dynamic_layer_stack_depth") \
            and hasattr(functorch, "pop_dynamic_layer_stack"):
        while functorch.get_dynamic_layer_stack_depth() > 0:
            functorch.pop_dynamic_layer_stack()
