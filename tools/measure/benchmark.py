"""Measured cost of each technique: torch memory to the byte, CPU time as a ratio.

    python -m tools.measure.benchmark                # measure, write the results, tables and figures
    python -m tools.measure.benchmark --render-only  # redraw tables and figures from results.json

Writes snippets/benchmark/results.json (every figure), snippets/benchmark/<model>.md (the table
rows the cost page includes; per-sample.md and amp.md: per-sample gradients and mixed precision,
measured by tools/measure/training_cost.py) and docs/assets/benchmark-memory.svg (.zh.svg: the same figure,
labelled in Chinese). tests/test_benchmark.py checks that the tables and figures are the ones
results.json gives, that the stored figures keep the relations the page states, and re-measures
those relations exactly on small models.

Memory: torch.profiler with profile_memory=True records every allocation and free of torch's CPU
allocator. Their running sum, from just before the forward pass, gives the step's peak and what
is still held when the step is over (the result the technique leaves you, the parameters' .grad
included). It counts torch tensors only, to the byte, and is the same on every run.

Time: process CPU time of one whole step (forward, backward, capture) with one thread. Each
technique's steps alternate with plain `loss.backward()` steps, after one warm-up of each; the
ratio is the median of the first over the median of the second. Ratios are reported, never
asserted: they vary from run to run.

With CUDA, the same steps also run on the GPU: torch.cuda.max_memory_allocated and CUDA-event
timing. CI has no GPU; nothing depends on it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn as nn
from torch.autograd.graph import get_gradient_edge, register_multi_grad_hook
from torch.profiler import ProfilerActivity, profile

from tools.measure import training_cost
from tools.snippets import DOCS, ROOT, SNIPPETS

RESULTS_DIR = SNIPPETS / "benchmark"
RESULTS = RESULTS_DIR / "results.json"
FIGURE = DOCS / "assets" / "benchmark-memory.svg"
FIGURE_ZH = DOCS / "assets" / "benchmark-memory.zh.svg"
MIB = 2**20


# --- Models: a stack of layers, every layer's output is a tap -------------------------------------

class Net(nn.Module):
    """layers[i] produces tap i; `tap` decides what each technique does with it."""

    def __init__(self, layers: list[nn.Module], head: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.head = head

    def forward(self, x: torch.Tensor, tap=lambda index, t: t) -> torch.Tensor:
        for index, layer in enumerate(self.layers):
            x = tap(index, layer(x))
        return self.head(x)


class MeanHead(nn.Module):
    def __init__(self, features: int, spatial: bool):
        super().__init__()
        self.linear = nn.Linear(features, 1)
        self.spatial = spatial

    def forward(self, x):
        if self.spatial:
            x = x.mean(dim=(2, 3))
        return self.linear(x).pow(2).mean()


@dataclass
class Workload:
    name: str
    description: str
    net: Net
    inputs: torch.Tensor

    def __post_init__(self):
        self.shapes = self.tap_shapes()  # for the zero taps, measured outside any step

    @property
    def taps(self) -> int:
        return len(self.net.layers)

    def tap_shapes(self) -> list[torch.Size]:
        shapes = []
        with torch.no_grad():
            self.net(self.inputs, lambda i, t: shapes.append(t.shape) or t)
        return shapes


def mlp(width: int = 1024, depth: int = 8, batch: int = 256) -> Workload:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    net = Net(layers, MeanHead(width, spatial=False))
    return Workload("mlp", f"{depth} × (Linear({width}, {width}), ReLU)", net,
                    torch.randn(batch, width))


def cnn(channels: int = 32, depth: int = 8, batch: int = 4, size: int = 64) -> Workload:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for index in range(depth):
        layers += [nn.Conv2d(3 if index == 0 else channels, channels, 3, padding=1), nn.ReLU()]
    net = Net(layers, MeanHead(channels, spatial=True))
    return Workload("cnn", f"{depth} × (Conv2d(·, {channels}, 3, padding=1), ReLU)", net,
                    torch.randn(batch, 3, size, size))


# --- Techniques: one training step each, returning what the technique leaves you ----------------

def _params(work: Workload) -> list[torch.Tensor]:
    return list(work.net.parameters())


def plain(work):
    work.net(work.inputs).backward()


def keep_references(work):
    acts = []
    work.net(work.inputs, lambda i, t: acts.append(t) or t).backward()
    return acts


def retain_grad(work):
    acts = []

    def tap(i, t):
        t.retain_grad()
        acts.append(t)
        return t

    work.net(work.inputs, tap).backward()
    return acts  # read acts[i].grad


def print_hook(work):
    sink = io.StringIO()  # printed as a reader would, into a buffer instead of the terminal

    def tap(i, t):
        t.register_hook(lambda grad: print(grad, file=sink))
        return t

    work.net(work.inputs, tap).backward()


def storing_hook(work):
    grads = [None] * work.taps

    def tap(i, t):
        t.register_hook(lambda grad: grads.__setitem__(i, grad))
        return t

    work.net(work.inputs, tap).backward()
    return grads


def node_prehook(work):
    grads = [None] * work.taps

    def tap(i, t):
        t.grad_fn.register_prehook(lambda grad_outputs: grads.__setitem__(i, grad_outputs[0]))
        return t

    work.net(work.inputs, tap).backward()
    return grads


def multi_grad_hook(work):
    acts, grads = [], []

    def tap(i, t):
        acts.append(t)
        return t

    loss = work.net(work.inputs, tap)
    register_multi_grad_hook(acts, grads.extend)
    acts.clear()  # the hook does not need the tensors
    loss.backward()
    return grads


def module_full_backward_hooks(work):
    grads = [None] * work.taps
    handles = [
        layer.register_full_backward_hook(
            lambda module, grad_input, grad_output, i=i: grads.__setitem__(i, grad_output[0]))
        for i, layer in enumerate(work.net.layers)
    ]
    with warnings.catch_warnings():  # the first layer's input needs no grad: a known warning
        warnings.filterwarnings("ignore", "Full backward hook is firing", UserWarning)
        work.net(work.inputs).backward()
    for handle in handles:
        handle.remove()
    return grads


def grad_cam_hooks(work):
    acts, grads = [None] * work.taps, [None] * work.taps

    def keep(i):
        def hook(module, inputs, output):
            acts[i] = output
            output.register_hook(lambda grad: grads.__setitem__(i, grad))
        return hook

    handles = [layer.register_forward_hook(keep(i)) for i, layer in enumerate(work.net.layers)]
    work.net(work.inputs).backward()
    for handle in handles:
        handle.remove()
    return acts, grads


def backward_inputs(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    loss.backward(inputs=acts + _params(work))
    return acts  # read acts[i].grad


def autograd_grad_once(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    grads = torch.autograd.grad(loss, acts + _params(work))
    for param, grad in zip(_params(work), grads[len(acts):]):
        param.grad = grad  # a training step needs them; plain backward() sets them too
    return grads[: len(acts)]


def autograd_grad_per_tap(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    grads = [torch.autograd.grad(loss, act, retain_graph=True)[0] for act in acts]
    acts.clear()
    loss.backward()  # and one more pass for the parameters
    return grads


def gradient_edges(work):
    edges = []
    loss = work.net(work.inputs, lambda i, t: edges.append(get_gradient_edge(t)) or t)
    grads = torch.autograd.grad(loss, edges + _params(work))
    for param, grad in zip(_params(work), grads[len(edges):]):
        param.grad = grad
    return grads[: len(edges)]


class _Tap(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, store, index):
        ctx.store, ctx.index = store, index
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        ctx.store[ctx.index] = grad
        return grad, None, None


def custom_function_tap(work):
    grads = [None] * work.taps
    work.net(work.inputs, lambda i, t: _Tap.apply(t, grads, i)).backward()
    return grads


def func_perturbation(work):
    params = {name: p.detach() for name, p in work.net.named_parameters()}
    shapes = work.shapes

    def loss(eps, params):
        return torch.func.functional_call(
            work.net, params, (work.inputs,), {"tap": lambda i, t: t + eps[i]})

    eps = [torch.zeros(shape, device=work.inputs.device) for shape in shapes]
    tap_grads, param_grads = torch.func.grad(loss, argnums=(0, 1))(eps, params)
    for name, p in work.net.named_parameters():
        p.grad = param_grads[name]
    return tap_grads


@dataclass(frozen=True)
class Technique:
    key: str
    label: str  # as the tables and figures show it: code, the same in both languages
    run: Callable


TECHNIQUES = [
    Technique("plain", "loss.backward()", plain),
    Technique("keep_references", "acts.append(t)", keep_references),
    Technique("retain_grad", "t.retain_grad()", retain_grad),
    Technique("print_hook", "t.register_hook(print)", print_hook),
    Technique("storing_hook", "t.register_hook(store)", storing_hook),
    Technique("node_prehook", "t.grad_fn.register_prehook(store)", node_prehook),
    Technique("multi_grad_hook", "register_multi_grad_hook(acts, store)", multi_grad_hook),
    Technique("module_full_backward_hooks", "layer.register_full_backward_hook(store)",
              module_full_backward_hooks),
    Technique("grad_cam_hooks", "register_forward_hook + register_hook", grad_cam_hooks),
    Technique("backward_inputs", "loss.backward(inputs=acts + params)", backward_inputs),
    Technique("autograd_grad_once", "autograd.grad(loss, acts + params)", autograd_grad_once),
    Technique("autograd_grad_per_tap", "for t in acts: autograd.grad(loss, t)",
              autograd_grad_per_tap),
    Technique("gradient_edges", "autograd.grad(loss, edges + params)", gradient_edges),
    Technique("custom_function_tap", "Tap.apply(t)", custom_function_tap),
    Technique("func_perturbation", "torch.func.grad(loss)(eps, params)", func_perturbation),
]


# --- Measuring ---------------------------------------------------------------------------------

def _allocation_sizes(prof) -> list[int]:
    """Signed sizes of torch's allocator events, in time order (frees are negative)."""
    from torch._C._profiler import _EventType

    found, stack = [], list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        if event.tag == _EventType.Allocation:
            found.append((event.start_time_ns, event.extra_fields.alloc_size))
        stack.extend(event.children)
    return [size for _, size in sorted(found)]


def memory(step: Callable[[], object]) -> tuple[int, int]:
    """(peak, held) bytes of torch memory during `step`, relative to just before it."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = step()
    live = peak = 0
    for size in _allocation_sizes(prof):
        live += size
        peak = max(peak, live)
    del result
    return peak, live


def _reset(work: Workload) -> None:
    for p in work.net.parameters():
        p.grad = None


def measure_memory(work: Workload, technique: Technique) -> tuple[int, int]:
    _reset(work)
    technique.run(work)  # warm-up: lazy allocations of a first call stay out of the figures
    _reset(work)
    figures = memory(lambda: technique.run(work))
    _reset(work)
    return figures


def _cpu_seconds(work: Workload, technique: Technique) -> float:
    _reset(work)
    started = time.process_time()
    result = technique.run(work)
    elapsed = time.process_time() - started
    del result
    _reset(work)
    return elapsed


def measure_time(work: Workload, technique: Technique, repeats: int) -> tuple[float, float]:
    """Median CPU seconds of one step of `technique` and of plain backward, measured alternately
    (after one warm-up of each) so that both see the same machine load."""
    plain_runs, technique_runs = [], []
    for index in range(repeats + 1):
        plain_seconds = _cpu_seconds(work, TECHNIQUES[0])
        technique_seconds = _cpu_seconds(work, technique)
        if index:
            plain_runs.append(plain_seconds)
            technique_runs.append(technique_seconds)
    return statistics.median(technique_runs), statistics.median(plain_runs)


def measure_cuda(work: Workload, technique: Technique, repeats: int) -> dict:
    """Peak allocated bytes and median CUDA-event milliseconds of one step on the GPU."""
    device = torch.device("cuda")
    gpu = Workload(work.name, work.description, work.net.to(device), work.inputs.to(device))
    try:
        _reset(gpu)
        technique.run(gpu)
        _reset(gpu)
        torch.cuda.synchronize()
        baseline = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        result = technique.run(gpu)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - baseline
        held = torch.cuda.memory_allocated() - baseline
        del result
        times = []
        for _ in range(repeats):
            _reset(gpu)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = technique.run(gpu)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
            del result
        _reset(gpu)
        return {"peak_bytes": peak, "held_bytes": held, "time_ms": statistics.median(times)}
    finally:
        work.net.to("cpu")


def tap_bytes(work: Workload) -> int:
    return sum(shape.numel() * work.inputs.element_size() for shape in work.shapes)


def run(workloads: list[Workload], repeats: int, techniques=TECHNIQUES, timing: bool = True) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(workloads, repeats, techniques, timing)
    finally:
        torch.set_num_threads(threads)


def _run(workloads, repeats, techniques, timing) -> dict:
    results = {"models": {}, "techniques": {t.key: t.label for t in techniques}, "rows": []}
    cuda = torch.cuda.is_available()
    for work in workloads:
        results["models"][work.name] = {
            "description": work.description,
            "input_shape": list(work.inputs.shape),
            "taps": work.taps,
            "tap_bytes": tap_bytes(work),
            "param_bytes": sum(p.numel() * p.element_size() for p in work.net.parameters()),
        }
        for technique in techniques:
            peak, held = measure_memory(work, technique)
            row = {"model": work.name, "technique": technique.key, "peak_bytes": peak,
                   "held_bytes": held}
            if timing:
                seconds, plain_seconds = measure_time(work, technique, repeats)
                row["cpu_ms"] = round(seconds * 1000, 1)
                row["time_ratio"] = round(seconds / plain_seconds, 2)
            if cuda:
                row["cuda"] = measure_cuda(work, technique, repeats)
            results["rows"].append(row)
            print(f"{work.name} {technique.key:<28} peak {peak / MIB:8.1f} MiB  "
                  f"held {held / MIB:8.1f} MiB  {row.get('time_ratio', '')}", flush=True)
    return results


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "threads_used": 1,
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
    }


# --- Rendering: the page's tables and figures come from results.json only ---------------------

def _mib(value: int) -> str:
    return f"{value / MIB:.1f}"


def _delta(value: int, base: int) -> str:
    return "0" if value == base else f"{(value - base) / MIB:+.1f}"


def table_rows(results: dict, model: str) -> str:
    rows = [r for r in results["rows"] if r["model"] == model]
    base = next(r for r in rows if r["technique"] == "plain")
    lines = []
    for row in rows:
        label = results["techniques"][row["technique"]]
        cells = [
            f"`{label}`",
            _mib(row["peak_bytes"]), _delta(row["peak_bytes"], base["peak_bytes"]),
            _mib(row["held_bytes"]), _delta(row["held_bytes"], base["held_bytes"]),
            f"{row['time_ratio']:.2f}" if "time_ratio" in row else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


FIGURE_TEXT = {
    "en": {
        "title": "Torch memory of one training step, by technique",
        "peak": "peak during the step",
        "held": "held after the step",
        "axis": "MiB",
    },
    "zh": {
        "title": "一步训练的 torch 内存：各方法对比",
        "peak": "步内峰值",
        "held": "留存内存",
        "axis": "MiB",
    },
}


def figure(results: dict, language: str) -> str:
    text = FIGURE_TEXT[language]
    models = list(results["models"])
    labels = list(results["techniques"].values())
    keys = list(results["techniques"])
    label_w, panel_w, bar_h, gap, top = 310, 280, 9, 8, 70
    row_h = 2 * bar_h + gap
    height = top + len(keys) * row_h + 50
    width = label_w + len(models) * (panel_w + 60) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="benchmark-title" font-family="sans-serif" font-size="12">',
        f'<title id="benchmark-title">{text["title"]}</title>',
        "<style>.peak{fill:#ef6c00} .held{fill:#1565c0} text{fill:#222} "
        ".grid{stroke:#ccc;stroke-width:1} .label{font-family:monospace}</style>",
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
        f'{text["title"]}</text>',
        f'<rect class="peak" x="{label_w}" y="32" width="12" height="10"/>'
        f'<text x="{label_w + 16}" y="41">{text["peak"]}</text>',
        f'<rect class="held" x="{label_w + 200}" y="32" width="12" height="10"/>'
        f'<text x="{label_w + 216}" y="41">{text["held"]}</text>',
    ]
    for row_index, label in enumerate(labels):
        y = top + row_index * row_h + bar_h + 4
        out.append(f'<text class="label" x="{label_w - 8}" y="{y}" text-anchor="end">{label}</text>')
    for panel, model in enumerate(models):
        rows = {r["technique"]: r for r in results["rows"] if r["model"] == model}
        scale_max = max(max(r["peak_bytes"], r["held_bytes"]) for r in rows.values())
        step = _nice_step(scale_max / MIB)
        x0 = label_w + panel * (panel_w + 60)
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top - 10}" text-anchor="middle" '
                   f'font-weight="bold">{model.upper()}</text>')
        ticks = int(scale_max / MIB // step) + 1
        span = ticks * step
        for tick in range(ticks + 1):
            x = x0 + panel_w * tick / ticks
            out.append(f'<line class="grid" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" '
                       f'y2="{top + len(keys) * row_h}"/>')
            out.append(f'<text x="{x:.1f}" y="{top + len(keys) * row_h + 16}" '
                       f'text-anchor="middle">{tick * step:g}</text>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top + len(keys) * row_h + 34}" '
                   f'text-anchor="middle">{text["axis"]}</text>')
        for row_index, key in enumerate(keys):
            row = rows[key]
            y = top + row_index * row_h
            for offset, (kind, value) in enumerate((("peak", row["peak_bytes"]),
                                                    ("held", row["held_bytes"]))):
                w = panel_w * (value / MIB) / span
                out.append(f'<rect class="{kind}" x="{x0}" y="{y + offset * bar_h}" '
                           f'width="{w:.1f}" height="{bar_h - 1}"><title>{_mib(value)} MiB'
                           f'</title></rect>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _nice_step(maximum: float) -> float:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if maximum / step <= 8:
            return step
    return 2000


def model_rows(results: dict) -> str:
    return "".join(
        f"| {name.upper()} | `{model['description']}` | "
        f"{' × '.join(str(n) for n in model['input_shape'])} | {model['taps']} | "
        f"{_mib(model['tap_bytes'])} | {_mib(model['param_bytes'])} |\n"
        for name, model in results["models"].items()
    )


def machine_row(results: dict) -> str:
    m = results["machine"]
    return (f"| {m['cpu']} | {m['cores']} | {m['threads_used']} | {m['system']} | "
            f"Python {m['python']} | torch {m['torch']} | {m['cuda'] or '—'} | "
            f"{m['run_seconds']} s |\n")


def cuda_rows(results: dict) -> str:
    rows = [r for r in results["rows"] if "cuda" in r]
    if not rows:
        return "| — | — | — | — | — |\n"  # the last run had no CUDA device
    return "".join(
        f"| {r['model'].upper()} | `{results['techniques'][r['technique']]}` | "
        f"{_mib(r['cuda']['peak_bytes'])} | {_mib(r['cuda']['held_bytes'])} | "
        f"{r['cuda']['time_ms']:.2f} |\n"
        for r in rows
    )


def render(results: dict) -> dict[Path, str]:
    """Every file derived from results.json, with its content."""
    files = {RESULTS_DIR / f"{model}.md": table_rows(results, model) for model in results["models"]}
    files[RESULTS_DIR / "models.md"] = model_rows(results)
    files[RESULTS_DIR / "machine.md"] = machine_row(results)
    files[RESULTS_DIR / "cuda.md"] = cuda_rows(results)
    files[RESULTS_DIR / "per-sample.md"] = training_cost.render_rows(results["training"], _mib, "per_sample")
    files[RESULTS_DIR / "amp.md"] = training_cost.render_rows(results["training"], _mib, "amp")
    files[FIGURE] = figure(results, "en")
    files[FIGURE_ZH] = figure(results, "zh")
    return files


def measure_training(repeats: int, **sizes) -> dict:
    """Per-sample gradients and mixed precision (tools/measure/training_cost.py), one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return training_cost.run(memory, repeats, **sizes)
    finally:
        torch.set_num_threads(threads)


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render-only", action="store_true",
                        help="redraw tables and figures from the stored results.json")
    parser.add_argument("--repeats", type=int, default=5, help="timed steps per technique")
    parser.add_argument("--training-only", action="store_true",
                        help="measure only the per-sample and mixed-precision rows, keep the rest")
    args = parser.parse_args(argv)

    if args.render_only:
        results = load()
    elif args.training_only:
        results = load()
        results["training"] = measure_training(args.repeats)
        RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    else:
        started = time.perf_counter()
        results = run([mlp(), cnn()], args.repeats)
        results["training"] = measure_training(args.repeats)
        results["machine"] = machine()
        results["method"] = {
            "memory": "torch.profiler(profile_memory=True): running sum of allocator events",
            "time": f"process CPU time per step, 1 thread, 1 warm-up, median of {args.repeats} "
                    "steps alternating with plain backward steps",
        }
        seconds = time.perf_counter() - started
        results["machine"]["run_seconds"] = round(seconds)
        print(f"measured in {seconds:.0f} s")
        RESULTS_DIR.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    for path, content in render(results).items():
        path.write_text(content, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
