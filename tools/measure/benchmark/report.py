"""The cost page's tables and figures, drawn from results.json only, and the file itself."""

from __future__ import annotations

import json
from pathlib import Path

from tools.measure import training_cost
from tools.measure.benchmark.measurement import MIB
from tools.snippets import DOCS, SNIPPETS

RESULTS_DIR = SNIPPETS / "cost" / "benchmark"  # the cost page's folder: tables it includes
RESULTS = RESULTS_DIR / "results.json"
FIGURE = DOCS / "assets" / "benchmark-memory.svg"
FIGURE_ZH = DOCS / "assets" / "benchmark-memory.zh.svg"


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


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))
