"""Real MCP servers for the tests: the SDK-written notes server over stdio or streamable HTTP (a subprocess on
loopback), and the configuration that names them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from orchestrator.config.mcp import McpConfig, McpServerConfig

_SERVERS = tempfile.TemporaryDirectory(prefix="reasonix-test-servers-")  # removed when the worker exits
NOTES_SERVER = Path(shutil.copy(Path(__file__).with_name("notes_server.py"), _SERVERS.name))
"""The notes server, copied under the temporary folder where a sandboxed server can read its own files. Not the
checkout's copy: an ordinary user's clone lies in their home, and a test's HOME and workspace do not, so the sandbox
empties that home (as it empties any home not in use) and the server could not be read."""


def notes_stdio(*flags: str, cwd: str | None = ".") -> McpServerConfig:
    """The notes server over stdio, keeping its notes in ``cwd`` (default: the workspace, as the tests read them)."""
    return McpServerConfig(command=sys.executable, args=[str(NOTES_SERVER), *flags], cwd=cwd)


def mcp_config(start_timeout_s: float = 30.0, call_timeout_s: float = 60.0, **servers: McpServerConfig) -> McpConfig:
    return McpConfig(servers=servers, start_timeout_s=start_timeout_s, call_timeout_s=call_timeout_s)


@contextmanager
def notes_http_server(cwd: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The notes server serving streamable HTTP on 127.0.0.1 (a subprocess); yields its endpoint URL and process."""
    proc = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "--http"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().strip().decode()  # the port the OS gave it
        assert port.isdigit(), f"the HTTP MCP server printed no port (exit status {proc.poll()})"
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while True:  # readiness: the port answers (any HTTP status)
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, "the HTTP MCP server exited"
                assert time.monotonic() < deadline, "the HTTP MCP server did not listen within 60 s"
                time.sleep(0.1)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
