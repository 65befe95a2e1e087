"""The command line: python -m tools.measure.benchmark [--render-only | --training-only]."""

from __future__ import annotations

import argparse
import json
import time

from tools.measure import benchmark
from tools.measure.benchmark.measurement import machine, measure_training, run
from tools.measure.benchmark.report import RESULTS, RESULTS_DIR, load, render
from tools.measure.benchmark.workloads import cnn, mlp
from tools.snippets import ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=benchmark.__doc__.split("\n\n")[0])
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
