"""The attacks of issue 22 item 15 against a real ``reasonix serve`` process on 127.0.0.1, with the valid token:
a foreign ``Host`` (DNS rebinding) is refused, a body over the bound is refused before it is read whole, and a
workspace that is ``/``, relative (it used to resolve against the service's own working directory), a system
directory or missing never starts a goal."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from orchestrator.serve.auth import MAX_BODY_BYTES

from ..run_support import clean_env, start_reasonix
from .support import workspace

TOKEN = "hardening-token-0123456789abcdef"


@dataclass
class Running:
    base: str
    port: int
    pid: int
    root: Path
    """Under the service's ``--workspace-root``."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("hardening")
    env = clean_env(tmp / "home")
    env["XDG_STATE_HOME"] = str(tmp / "state")
    root = tmp / "projects"
    root.mkdir()
    proc = start_reasonix(
        "serve",
        "--port",
        "0",
        "--token",
        TOKEN,
        "--allow-host",
        "tunnel.example.test",
        "--workspace-root",
        str(root),
        "--base-url",
        "http://127.0.0.1:9",
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("reasonix serve: http://127.0.0.1:"), (line, proc.stderr.read())
        base = line.removeprefix("reasonix serve: ").partition("/?token=")[0]
        yield Running(base=base, port=int(base.rsplit(":", 1)[1]), pid=proc.pid, root=root)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _client(served: Running) -> httpx.Client:
    return httpx.Client(base_url=served.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)


def test_a_foreign_host_is_refused_with_421_and_loopback_or_allowed_names_are_served(served: Running) -> None:
    with _client(served) as client:
        for host in ("evil.com", f"evil.com:{served.port}", "127.0.0.1.evil.com", "10.0.0.1"):
            refused = client.get("/api/runs", headers={"Host": host})
            assert refused.status_code == 421, host
            body = refused.json()
            assert "DNS rebinding" in body["error"] and "--allow-host" in body["hint"], body
        for host in (
            f"127.0.0.1:{served.port}",
            f"localhost:{served.port}",
            f"[::1]:{served.port}",
            "tunnel.example.test",
        ):
            assert client.get("/api/runs", headers={"Host": host}).status_code == 200, host


def _raw_request(served: Running, head: bytes, body_part: bytes) -> bytes:
    """Send a request's head and the start of its body, then read what the service answers (it must answer without
    waiting for the rest of the body)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(head + body_part)
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_declared_body_over_the_bound_is_refused_with_413_before_it_is_read(served: Running) -> None:
    declared = 100 * 1024 * 1024
    head = (
        f"POST /api/goals HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    ).encode()
    answer = _raw_request(served, head, b'{"workspace": "' + b"x" * 4096)
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"over the service's bound" in rest


def test_a_chunked_body_over_the_bound_is_refused_with_413_and_never_held_whole(served: Running) -> None:
    before = _peak_rss_kib(served.pid)
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        piece = b"x" * 65536
        while sent < 100 * 1024 * 1024:
            sent += len(piece)
            yield piece

    with _client(served) as client:
        try:
            response = client.post("/api/goals", content=chunks(), headers={"Content-Type": "application/json"})
        except httpx.TransportError:  # the service may close the connection while the client still writes
            response = None
    if response is not None:
        assert response.status_code == 413, response.text
        assert "bound" in response.json()["error"]
    assert sent < 100 * 1024 * 1024, "the service read the whole 100 MB body"
    assert _peak_rss_kib(served.pid) - before < 4 * MAX_BODY_BYTES // 1024 + 32 * 1024


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("/", "system directory"),
        ("/etc", "system directory"),
        ("/usr/lib", "system directory"),
        ("../../etc", "not an absolute path"),
        ("ws", "not an absolute path"),
        ("~/ws", "not an absolute path"),
        ("/no/such/dir/anywhere", "does not exist"),
    ],
)
def test_a_workspace_that_is_not_an_absolute_project_directory_is_refused_with_400(
    served: Running, name: str, problem: str
) -> None:
    with _client(served) as client:
        response = client.post("/api/goals", json={"workspace": name, "objective": "Say hello"})
        assert response.status_code == 400, response.text
        body = response.json()
        assert problem in body["error"], body
        assert "absolute path of an existing project directory" in body["hint"]
        assert "--workspace" not in body["error"] + body["hint"]  # a message for an API client, not a CLI hint
        assert client.get("/api/runs").json()["runs"] == []  # no goal was started anywhere


def test_a_workspace_outside_the_workspace_root_is_refused_and_one_inside_is_taken(
    served: Running, tmp_path: Path
) -> None:
    outside = workspace(tmp_path, "outside")
    inside = workspace(served.root, "inside")
    with _client(served) as client:
        refused = client.post("/api/goals", json={"workspace": str(outside), "objective": "Say hello"})
        assert refused.status_code == 400 and "workspace roots" in refused.json()["error"], refused.text
        # A workspace under the root is taken (the goal then stops at the unreachable endpoint; that is not the point).
        taken = client.post("/api/goals", json={"workspace": str(inside), "objective": "Say hello"})
        assert taken.status_code == 201, taken.text
        run_id = taken.json()["run_id"]
        assert client.post(f"/api/runs/{run_id}/pause").status_code in (200, 409)
