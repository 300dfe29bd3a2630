"""A real ``reasonix emulate``, a real ``reasonix serve`` and a real headless Chromium (Debian's ``chromium``, driven by
Playwright for Python through its own driver; nothing is downloaded), for the dashboard tests and
``bench/make_screenshot.py``.

Without the browser (or Playwright) the tests skip and say why, except in CI (``CI`` set), where that is a failure:
``.ci/run`` installs ``chromium``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from tests.support.parts import require

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

ROOT = Path(__file__).resolve().parents[4]
SERVE_LINE = re.compile(r"^reasonix serve: (http://[^/]+)/\?token=(\S+)$")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """The browser to drive: ``$REASONIX_CHROMIUM``, else Debian's ``chromium`` on PATH."""
    return os.environ.get("REASONIX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def require_browser() -> str:
    """The chromium executable, for a test marked ``chromium`` (tests/support/parts.py skips it without the browser or
    Playwright, and fails it in CI, where ``.ci/run`` installs it)."""
    require("chromium")
    path = chromium_path()
    assert path is not None
    return path


def clean_env(home: Path) -> dict[str, str]:
    """A user with a fake key, no base URL and an empty config directory under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "REASONIX_"))}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_STATE_HOME"] = str(home / ".state")
    env["PYTHONPATH"] = str(ROOT)
    env["DEEPSEEK_API_KEY"] = "sk-test"
    return env


def _start(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def emulator(script: dict[str, Any], root: Path, env: dict[str, str], latency: str = "off") -> Iterator[str]:
    """``reasonix emulate --script FILE`` as a process; yields its URL."""
    path = root / "emulator-script.json"
    path.write_text(json.dumps(script))
    proc = _start("emulate", "--port", "0", "--script", str(path), "--latency", latency, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("listening on http://"), (first, proc.stderr.read() if proc.stderr else "")
        yield first.removeprefix("listening on ")
    finally:
        _stop(proc)


@dataclass(frozen=True)
class Service:
    url: str
    """``http://HOST:PORT`` (no trailing slash)."""
    token: str
    proc: subprocess.Popen[str]

    @property
    def page_url(self) -> str:
        return f"{self.url}/?token={self.token}"

    def api(self, path: str) -> Any:
        response = httpx.get(self.url + path, headers={"Authorization": f"Bearer {self.token}"}, timeout=30)
        response.raise_for_status()
        return response.json()


@contextmanager
def service(workspace: Path, base_url: str, root: Path, env: dict[str, str], *extra: str) -> Iterator[Service]:
    """``reasonix serve --port 0`` as a process, its goals talking to ``base_url``; yields its URL and token, read from
    the one line it prints on standard output."""
    proc = _start(
        "serve",
        "--port",
        "0",
        "--workspace",
        str(workspace),
        "--state-dir",
        str(root / "serve-state"),
        "--base-url",
        base_url,
        *extra,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        match = SERVE_LINE.match(line)
        assert match, (line, proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        yield Service(url=match.group(1), token=match.group(2), proc=proc)
    finally:
        _stop(proc)


@contextmanager
def browser(executable: str, width: int = 1400, height: int = 1000) -> Iterator[BrowserContext]:
    """A headless Chromium with a fresh profile, nothing fetched from the internet."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="reasonix-chromium-") as profile:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
        )
        try:
            yield context
        finally:
            context.close()


def fmt_cost(usd: float) -> str:
    """The page's cost format (``fmtCost`` in js/dom.js)."""
    return f"${usd:.2f}" if usd >= 10 else f"${usd:.4f}"


def fmt_ratio(ratio: float | None) -> str:
    """The page's cache-ratio format (``fmtRatio`` in js/dom.js)."""
    return "–" if ratio is None else f"{ratio * 100:.1f}%"


class CuttableProxy:
    """A loopback TCP proxy in front of the service whose connections can be cut, as a dropped network does: the page
    is opened through it, and :meth:`cut` closes every open connection and refuses new ones until :meth:`restore`."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").rsplit(":", 1)
        self._upstream = (host, int(port))
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._refusing = False
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                refuse = self._refusing
            if refuse:
                client.close()
                continue
            upstream = socket.create_connection(self._upstream)
            with self._lock:
                self._open |= {client, upstream}
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            self._refusing = True
            doomed, self._open = self._open, set()
        for s in doomed:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def restore(self) -> None:
        with self._lock:
            self._refusing = False

    def close(self) -> None:
        self.cut()
        self._server.close()
