"""The built site on 127.0.0.1, and the Chromium that reads it: shared by the browser tests
(tests/browser.py) and the Lighthouse command (tools/measure/lighthouse.py)."""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import shutil
import socket
import threading
from pathlib import Path

# Keep Chromium from calling home: the machines have no network beyond the package registries.
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str | None:
    """GUIDE_CHROMIUM, else Debian's chromium on PATH."""
    return os.environ.get("GUIDE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def headless_chromium_path() -> str | None:
    """For the browser tests: GUIDE_CHROMIUM, else Debian's chromium-headless-shell (the same
    Chromium release, built as the old headless shell, without the browser's own interface, as
    Playwright's own headless runs use), else chromium. The same pages and searches cost it about
    a third less CPU than the full browser in headless mode (page loads 4.0 -> 1.7 CPU-s for four
    pages, 20 pasted-line searches 14.1 -> 11.1), and the browser job is most of `make test`'s CPU."""
    return os.environ.get("GUIDE_CHROMIUM") or shutil.which("chromium-headless-shell") or chromium_path()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_TEXT = {".html", ".css", ".js", ".json", ".svg", ".xml"}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves text gzip-compressed when the client accepts it, as GitHub Pages does: Lighthouse
    times the transfer of every byte."""

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        target = Path(self.translate_path(self.path))
        if target.is_dir() and self.path.split("?")[0].endswith("/"):
            target = target / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and target.is_file() and target.suffix in _TEXT):
            return super().send_head()  # directories without "/", other files, errors
        body = gzip.compress(target.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(target)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class Server:
    """The built site over HTTP on 127.0.0.1 (on `port`, or a free one), in a background thread."""

    def __init__(self, site: Path, port: int = 0) -> None:
        handler = functools.partial(_QuietHandler, directory=str(site))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
