"""Measuring the workloads: torch memory with the profiler, CPU time as a ratio to plain backward,
CUDA memory and time where there is a GPU, and the machine the run was on."""

from __future__ import annotations

import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable

import torch
from torch.profiler import ProfilerActivity, profile

from tools.measure import training_cost
from tools.measure.benchmark.workloads import TECHNIQUES, Technique, Workload

MIB = 2**20


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


def measure_training(repeats: int, **sizes) -> dict:
    """Per-sample gradients and mixed precision (tools/measure/training_cost.py), one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return training_cost.run(memory, repeats, **sizes)
    finally:
        torch.set_num_threads(threads)
