"""The cost page's training-loop rows: per-sample gradients three ways, and mixed precision.

Part of `make benchmark` (tools/measure/benchmark/: measurement.py calls run(), report.py
render_rows()); the same method as the technique rows: torch memory to the byte with the
profiler, CPU time as the median ratio to a plain step, measured alternately, one thread.

Per-sample gradients of a small classifier, each method returning a {name: (batch, *shape)} dict:
a Python loop of one backward per sample, torch.func (vmap over grad of functional_call), and
Opacus' GradSampleModule. run() checks that the three agree before it reports any figure.
Mixed precision: one training step of a wider model in float32, under autocast with bfloat16,
and under autocast with float16 and a GradScaler (all on CPU).
"""

from __future__ import annotations

import copy
import statistics
import time
import warnings
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
AMP_BATCH = 256


def classifier(width: int = 256) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, 10))


def _data(batch: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return torch.randn(batch, width, generator=generator), torch.randint(0, 10, (batch,), generator=generator)


# --- Per-sample gradients -------------------------------------------------------------------

def per_sample_methods(model: nn.Module, x: torch.Tensor, y: torch.Tensor,
                       with_opacus: bool = True) -> tuple[dict[str, Callable], nn.Module]:
    """The per-sample methods by name, and the module Opacus wrapped (the model without it)."""
    params = dict(model.named_parameters())

    def batch_backward():  # the baseline: the batch's gradient, not per sample
        F.cross_entropy(model(x), y, reduction="sum").backward()
        return {name: p.grad for name, p in model.named_parameters()}

    def loop():
        rows = []
        for i in range(len(x)):
            loss = F.cross_entropy(model(x[i:i + 1]), y[i:i + 1], reduction="sum")
            rows.append(torch.autograd.grad(loss, list(params.values())))
        return {name: torch.stack([row[k] for row in rows]) for k, name in enumerate(params)}

    def one_sample_loss(p, xi, yi):
        out = torch.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0), reduction="sum")

    per_sample_grad = torch.vmap(torch.func.grad(one_sample_loss), in_dims=(None, 0, 0))
    detached = {name: p.detach() for name, p in params.items()}

    def vmap_grad():
        return per_sample_grad(detached, x, y)

    methods = {"batch_backward": batch_backward, "loop": loop, "vmap_grad": vmap_grad}
    if not with_opacus:
        return methods, model
    from opacus import GradSampleModule  # requirements-models.txt

    twin = copy.deepcopy(model)  # Opacus' hooks would also fire inside the other methods
    wrapped = GradSampleModule(twin, loss_reduction="sum")

    def opacus():
        F.cross_entropy(wrapped(x), y, reduction="sum").backward()
        return {name: p.grad_sample for name, p in twin.named_parameters()}

    return {**methods, "opacus": opacus}, wrapped


PER_SAMPLE_LABELS = {
    "batch_backward": "loss.backward() (batch gradient only)",
    "loop": "loop: autograd.grad per sample",
    "vmap_grad": "vmap(grad(functional_call))",
    "opacus": "Opacus GradSampleModule",
}


# --- Mixed precision --------------------------------------------------------------------------

def amp_methods(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, Callable]:
    scaler = torch.amp.GradScaler("cpu")

    def float32():
        F.cross_entropy(model(x), y).backward()
        return [p.grad for p in model.parameters()]

    def bfloat16():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        return [p.grad for p in model.parameters()]

    def float16_scaled():
        with torch.autocast("cpu", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        return [p.grad for p in model.parameters()]

    return {"float32": float32, "bfloat16": bfloat16, "float16_scaled": float16_scaled}


AMP_LABELS = {
    "float32": "float32 step",
    "bfloat16": "autocast(bfloat16)",
    "float16_scaled": "autocast(float16) + GradScaler",
}


# --- Measuring --------------------------------------------------------------------------------

def clear(*models: nn.Module) -> None:
    """What a step leaves behind is freed before the next one: every step starts from the same
    state, and the measured figures count only what the step itself allocates."""
    for model in models:
        for p in model.parameters():
            p.grad = None
            if hasattr(p, "grad_sample"):
                p.grad_sample = None


def _cpu_seconds(step: Callable, models) -> float:
    clear(*models)
    started = time.process_time()
    result = step()
    elapsed = time.process_time() - started
    del result
    return elapsed


def _ratio(step: Callable, baseline: Callable, repeats: int, models) -> float:
    if step is baseline:
        return 1.0
    ours, base = [], []
    for index in range(repeats + 1):
        b, o = _cpu_seconds(baseline, models), _cpu_seconds(step, models)
        if index:  # the first pair warms up
            base.append(b)
            ours.append(o)
    return round(statistics.median(ours) / statistics.median(base), 2)


def _agree(results: dict[str, dict[str, torch.Tensor]]) -> None:
    reference = results["vmap_grad"]
    for method in [m for m in ("loop", "opacus") if m in results]:
        for name, grads in reference.items():
            if not torch.allclose(results[method][name], grads, atol=1e-5):
                raise AssertionError(f"per-sample gradients of {name}: {method} differs from vmap")


def run(memory: Callable, repeats: int, timing: bool = True, width: int = 256,
        batch: int = BATCH, amp_batch: int = AMP_BATCH, with_opacus: bool = True) -> dict:
    """memory: tools.measure.benchmark.measurement.memory, (peak, held) bytes of one call.
    with_opacus=False leaves the Opacus row out (the tests' small run: Opacus 1.6 does not import
    on every tracked torch)."""
    model = classifier(width)
    x, y = _data(batch, width)
    methods, wrapped = per_sample_methods(model, x, y, with_opacus)
    models = (model, wrapped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus' own warnings about secure RNG, not about cost
        found = {}
        for key, step in methods.items():
            clear(*models)
            found[key] = step()
        _agree(found)
        del found
        param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        out = {"model": f"three Linear({width}, ·) layers, ReLU, cross-entropy", "batch": batch,
               "amp_batch": amp_batch, "param_bytes": param_bytes, "rows": []}
        for key, step in methods.items():
            clear(*models)
            peak, held = memory(step)
            row = {"group": "per_sample", "method": key, "peak_bytes": peak, "held_bytes": held}
            if timing:
                row["time_ratio"] = _ratio(step, methods["batch_backward"], repeats, models)
            out["rows"].append(row)
        if with_opacus:
            wrapped._close()
        model = classifier(width)
        x, y = _data(amp_batch, width)
        steps = amp_methods(model, x, y)
        for key, step in steps.items():
            step()  # warm-up: autocast's weight casts, the scaler's first state
            clear(model)
            peak, held = memory(step)
            row = {"group": "amp", "method": key, "peak_bytes": peak, "held_bytes": held}
            if timing:
                row["time_ratio"] = _ratio(step, steps["float32"], repeats, (model,))
            out["rows"].append(row)
    return out


def render_rows(training: dict, mib: Callable[[int], str], group: str) -> str:
    """The rows of one table the cost page includes (snippets/cost/benchmark/per-sample.md, amp.md)."""
    lines = []
    for row in (r for r in training["rows"] if r["group"] == group):
        labels = PER_SAMPLE_LABELS if row["group"] == "per_sample" else AMP_LABELS
        batch = training["batch"] if row["group"] == "per_sample" else training["amp_batch"]
        ratio = f"{row['time_ratio']:.2f}" if "time_ratio" in row else ""
        lines.append(f"| `{labels[row['method']]}` | {batch} | {mib(row['peak_bytes'])} | "
                     f"{mib(row['held_bytes'])} | {ratio} |")
    return "\n".join(lines) + "\n"
