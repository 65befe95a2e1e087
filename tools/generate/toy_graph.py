"""Draw the seeds' toy graph with values computed by torch, never typed.

    python -m tools.generate.toy_graph          # writes docs/assets/toy-graph.svg

x = 3, w = 2, b = 1; u = x * w, v = u + b, a = relu(v). Every node shows its forward value and
da/d(node). tests/test_generated.py checks that the committed file equals a fresh drawing.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tools.snippets import DOCS

OUTPUT = DOCS / "assets" / "toy-graph.svg"

# name, operation, centre
NODES = [
    ("x", "", (70, 60)),
    ("w", "", (70, 200)),
    ("u", "×", (270, 130)),
    ("b", "", (270, 270)),
    ("v", "+", (470, 130)),
    ("a", "relu", (670, 130)),
]
EDGES = [("x", "u"), ("w", "u"), ("u", "v"), ("b", "v"), ("v", "a")]
R = 34


def values() -> dict[str, tuple[float, float]]:
    x = torch.tensor(3.0, requires_grad=True)
    w = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    u = x * w
    v = u + b
    a = F.relu(v)
    tensors = {"x": x, "w": w, "b": b, "u": u, "v": v}
    grads = torch.autograd.grad(a, tuple(tensors.values()))
    result = {name: (t.item(), g.item()) for (name, t), g in zip(tensors.items(), grads)}
    result["a"] = (a.item(), 1.0)
    return result


def _number(value: float) -> str:
    return f"{value:g}"


def svg() -> str:
    vals = values()
    pos = {name: centre for name, _, centre in NODES}
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 760 330" role="img" '
        'aria-labelledby="toy-graph-title" font-family="sans-serif" font-size="16">',
        '<title id="toy-graph-title">u = x·w, v = u + b, a = relu(v) with x=3, w=2, b=1</title>',
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
        'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>',
        "<style>circle{fill:#fff;stroke:#555;stroke-width:2} .op{fill:#fff3e0} "
        ".val{fill:#c62828;font-weight:bold} .grad{fill:#1565c0} text{fill:#222}</style>",
    ]
    for start, end in EDGES:
        (x1, y1), (x2, y2) = pos[start], pos[end]
        dx, dy = x2 - x1, y2 - y1
        length = (dx * dx + dy * dy) ** 0.5
        ux, uy = dx / length, dy / length
        out.append(
            f'<line x1="{x1 + ux * R:.1f}" y1="{y1 + uy * R:.1f}" x2="{x2 - ux * R:.1f}" '
            f'y2="{y2 - uy * R:.1f}" stroke="#555" stroke-width="2" marker-end="url(#arrow)"/>'
        )
    for name, op, (cx, cy) in NODES:
        value, grad = vals[name]
        css = ' class="op"' if op else ""
        out.append(f'<circle cx="{cx}" cy="{cy}" r="{R}"{css}/>')
        label = f"{name} = {op}" if op else name
        out.append(f'<text x="{cx}" y="{cy - 4}" text-anchor="middle">{label}</text>')
        out.append(
            f'<text x="{cx}" y="{cy + 16}" text-anchor="middle" class="val">{_number(value)}</text>'
        )
        out.append(
            f'<text x="{cx}" y="{cy + R + 22}" text-anchor="middle" class="grad">'
            f"∂a/∂{name} = {_number(grad)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(svg(), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(DOCS.parent)}")
