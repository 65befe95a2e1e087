"""The picture a shared link shows (og:image): docs/assets/social-card.png, 1200 x 630.

    python -m tools.generate.social_card        # or: make social-card

Draws the card as HTML (both site names, the guide's promise) and has Debian's Chromium take a
headless screenshot of it. The Chinese line needs a font with Chinese glyphs (Debian:
fonts-wqy-microhei); without one the command stops instead of drawing empty boxes. One card for
every page of both languages: docs/overrides/main.html points og:image at it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tools.dev.serve import CHROMIUM_FLAGS, chromium_path

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "docs" / "assets" / "social-card.png"
WIDTH, HEIGHT = 1200, 630

PAGE = """<!doctype html>
<meta charset="utf-8">
<style>
  html, body {{ margin: 0; width: {width}px; height: {height}px; overflow: hidden; }}
  body {{ background: #bf360c; color: #fff; font-family: "DejaVu Sans", "WenQuanYi Micro Hei", sans-serif;
          display: flex; flex-direction: column; justify-content: center; padding: 0 80px;
          box-sizing: border-box; }}
  .code {{ font-family: "DejaVu Sans Mono", monospace; font-size: 34px; opacity: .9; margin-bottom: 36px; }}
  h1 {{ font-size: 64px; line-height: 1.15; margin: 0 0 24px; }}
  .zh {{ font-family: "WenQuanYi Micro Hei", sans-serif; font-size: 46px; margin-bottom: 48px; }}
  .promise {{ font-size: 28px; opacity: .9; }}
</style>
<div class="code">&gt;&gt;&gt; print(h.grad)<br>None</div>
<h1>Gradients of Intermediate Tensors in PyTorch</h1>
<div class="zh">PyTorch 中间张量梯度指南</div>
<div class="promise">Every output produced by running the code, checked by the tests · English · 简体中文</div>
"""


def has_chinese_font() -> bool:
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
    return found.returncode == 0 and bool(found.stdout.strip())


def main() -> None:
    chrome = chromium_path()
    if chrome is None:
        sys.exit("Debian's chromium is not installed: make system-packages")
    if not has_chinese_font():
        sys.exit("no font with Chinese glyphs: apt-get install fonts-wqy-microhei")
    with tempfile.TemporaryDirectory(prefix="guide-card-") as folder:
        page = Path(folder) / "card.html"
        page.write_text(PAGE.format(width=WIDTH, height=HEIGHT), encoding="utf-8")
        subprocess.run(
            [chrome, "--headless=new", *CHROMIUM_FLAGS, "--hide-scrollbars",
             f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={CARD}", page.as_uri()],
            check=True, capture_output=True,
        )
    print(f"wrote {CARD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
