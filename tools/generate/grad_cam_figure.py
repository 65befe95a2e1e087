"""Draw the Grad-CAM example: the input image next to its heat map, from the snippet's own run.

    python -m tools.generate.grad_cam_figure        # writes docs/assets/grad-cam.svg

The figure has no text: each language's page captions it. tests/test_generated.py checks that the
committed file equals a fresh drawing.
"""

from __future__ import annotations

import contextlib
import io

from tools.snippets import DOCS, Snippet, find

OUTPUT = DOCS / "assets" / "grad-cam.svg"
CELL = 20
GAP = 40


def _run_snippet() -> dict:
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(Snippet.load(find("grad_cam")).script(), namespace)
    return namespace


def _heat(value: float) -> str:
    """Black -> red -> yellow -> white, a colour map readable in print and on screen."""
    stops = [(0.0, (20, 20, 30)), (0.4, (200, 40, 30)), (0.8, (250, 200, 40)), (1.0, (255, 255, 230))]
    for (x0, c0), (x1, c1) in zip(stops, stops[1:]):
        if value <= x1:
            t = (value - x0) / (x1 - x0)
            return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(c0, c1))
    return "#ffffe6"


def _panel(values, x0: int, colour) -> list[str]:
    return [
        f'<rect x="{x0 + j * CELL}" y="{i * CELL}" width="{CELL}" height="{CELL}" fill="{colour(v)}"/>'
        for i, row in enumerate(values)
        for j, v in enumerate(row)
    ]


def svg() -> str:
    namespace = _run_snippet()
    image = namespace["image"][0, 0].tolist()
    cam = namespace["cam"].tolist()
    size = len(image) * CELL
    grey = lambda v: "#" + f"{round(40 + 200 * v):02x}" * 3  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {2 * size + GAP} {size}" role="img" '
        'aria-label="Input image and its Grad-CAM heat map">',
        *_panel(image, 0, grey),
        *_panel(cam, size + GAP, lambda v: _heat(round(v, 4))),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(svg(), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(DOCS.parent)}")
