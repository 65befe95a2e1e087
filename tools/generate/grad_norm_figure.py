"""Draw the per-layer gradient norms of a deep plain MLP and of the same MLP with residual
connections and LayerNorm, from a fresh run (the models of the monitor_vanishing_exploding snippet).

    python -m tools.generate.grad_norm_figure   # writes docs/assets/grad-norms.svg and grad-norms.zh.svg

Pure SVG text, no plotting library: labels are <text> elements, so the Chinese figure renders with
the page's fonts. tests/test_generated.py checks that the committed files equal a fresh drawing.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from tools.snippets import DOCS

OUTPUT = DOCS / "assets" / "grad-norms.svg"
OUTPUT_ZH = DOCS / "assets" / "grad-norms.zh.svg"
DEPTH, WIDTH, BATCH = 20, 32, 8
LARGE_INIT_STD = 4 / WIDTH**0.5

TEXT = {
    "en": {
        "title": "Weight-gradient norm of each layer, 20 tanh layers, one backward pass",
        "x": "layer index (0 = nearest the input)",
        "y": "‖grad‖ (log scale)",
        "series": ["plain, default init", "plain, large init (std 0.71)",
                   "residual + LayerNorm, default init", "residual + LayerNorm, large init"],
    },
    "zh": {
        "title": "各层权重梯度的范数：20 层 tanh，一次反向传播",
        "x": "层序号（0 = 最靠近输入）",
        "y": "‖grad‖（对数坐标）",
        "series": ["普通 MLP，默认初始化", "普通 MLP，大初始化（std 0.71）",
                   "残差 + LayerNorm，默认初始化", "残差 + LayerNorm，大初始化"],
    },
}
STYLES = [("#c62828", ""), ("#ef6c00", ""), ("#1565c0", ' stroke-dasharray="6 3"'),
          ("#2e7d32", ' stroke-dasharray="6 3"')]


class DeepMLP(nn.Module):
    """The snippet's model: `depth` tanh layers, optionally pre-LayerNorm residual blocks."""

    def __init__(self, residual: bool, init_std: float | None = None):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH))
        self.norms = nn.ModuleList(nn.LayerNorm(WIDTH) if residual else nn.Identity()
                                   for _ in range(DEPTH))
        self.head = nn.Linear(WIDTH, 1)
        if init_std is not None:
            for layer in self.layers:
                nn.init.normal_(layer.weight, std=init_std)

    def forward(self, x):
        for layer, norm in zip(self.layers, self.norms):
            h = torch.tanh(layer(norm(x)))
            x = x + h if self.residual else h
        return self.head(x)


def layer_norms(residual: bool, init_std: float | None = None) -> list[float]:
    torch.manual_seed(0)
    model = DeepMLP(residual, init_std)
    model(torch.randn(BATCH, WIDTH)).pow(2).mean().backward()
    return [layer.weight.grad.norm().item() for layer in model.layers]


def series() -> list[list[float]]:
    return [layer_norms(False), layer_norms(False, LARGE_INIT_STD),
            layer_norms(True), layer_norms(True, LARGE_INIT_STD)]


def svg(language: str = "en", data: list[list[float]] | None = None) -> str:
    text = TEXT[language]
    data = series() if data is None else data
    left, top, plot_w, plot_h, legend_w = 70, 50, 460, 300, 250
    width, height = left + plot_w + legend_w + 20, top + plot_h + 60
    logs = [math.log10(v) for values in data for v in values]
    lo, hi = math.floor(min(logs)), math.ceil(max(logs))

    def x_of(i: int) -> float:
        return left + plot_w * i / (DEPTH - 1)

    def y_of(v: float) -> float:
        return top + plot_h * (hi - math.log10(v)) / (hi - lo)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="grad-norms-title" font-family="sans-serif" font-size="12">',
        f'<title id="grad-norms-title">{text["title"]}</title>',
        "<style>text{fill:#222} .grid{stroke:#ddd;stroke-width:1} .axis{stroke:#444;stroke-width:1}"
        "</style>",
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">'
        f'{text["title"]}</text>',
    ]
    for exponent in range(lo, hi + 1):
        y = top + plot_h * (hi - exponent) / (hi - lo)
        out.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" '
                   f'y2="{y:.1f}"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">1e{exponent}</text>')
    for i in range(0, DEPTH, 5):
        out.append(f'<line class="grid" x1="{x_of(i):.1f}" y1="{top}" x2="{x_of(i):.1f}" '
                   f'y2="{top + plot_h}"/>')
    for i in list(range(0, DEPTH, 5)) + [DEPTH - 1]:
        out.append(f'<text x="{x_of(i):.1f}" y="{top + plot_h + 16}" '
                   f'text-anchor="middle">{i}</text>')
    out.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
               f'y2="{top + plot_h}"/>')
    out.append(f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 36}" text-anchor="middle">'
               f'{text["x"]}</text>')
    out.append(f'<text x="16" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + plot_h / 2})">{text["y"]}</text>')
    for values, (colour, dash), label in zip(data, STYLES, text["series"]):
        points = " ".join(f"{x_of(i):.1f},{y_of(v):.1f}" for i, v in enumerate(values))
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} '
                   f'points="{points}"><title>{label}</title></polyline>')
        for i, v in enumerate(values):
            out.append(f'<circle cx="{x_of(i):.1f}" cy="{y_of(v):.1f}" r="2.5" fill="{colour}">'
                       f'<title>{i}: {v:.3g}</title></circle>')
    for row, ((colour, dash), label) in enumerate(zip(STYLES, text["series"])):
        y = top + 10 + row * 22
        x0 = left + plot_w + 20
        out.append(f'<line x1="{x0}" y1="{y}" x2="{x0 + 28}" y2="{y}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{x0 + 34}" y="{y + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    data = series()
    for path, language in ((OUTPUT, "en"), (OUTPUT_ZH, "zh")):
        path.write_text(svg(language, data), encoding="utf-8")
        print(f"wrote {path.relative_to(DOCS.parent)}")


if __name__ == "__main__":
    main()
