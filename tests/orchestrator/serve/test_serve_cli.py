"""``reasonix serve`` as a real process: its URL line, the token, a goal against a real ``reasonix emulate`` process,
Ctrl-C pausing the running goal; and the refusal to bind beyond loopback without ``--allow-remote``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from ..run_support import clean_env, emulator_process, reasonix, start_reasonix
from .support import simple_script, workspace


def test_reasonix_serve_prints_its_url_runs_a_goal_and_pauses_it_on_ctrl_c(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    env = clean_env(tmp_path / "home")
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    script = simple_script().model_dump(mode="json", exclude_defaults=True)
    with emulator_process(script, tmp_path, env) as emulator_url:
        proc = start_reasonix("serve", "--port", "0", "--workspace", str(ws), "--base-url", emulator_url, env=env)
        try:
            assert proc.stdout is not None and proc.stderr is not None
            line = proc.stdout.readline().strip()
            assert line.startswith("reasonix serve: http://127.0.0.1:"), (line, proc.stderr.read())
            url = line.removeprefix("reasonix serve: ")
            base, _, token = url.partition("/?token=")
            assert len(token) >= 24
            with httpx.Client(base_url=base, timeout=30) as bare:
                assert bare.get("/api/runs").status_code == 401
                assert bare.get("/api/runs", headers={"Authorization": f"Bearer {token}"}).json() == {
                    "runs": [],
                    "workspaces": [str(ws.resolve())],  # what `--workspace` named: the page offers it
                }
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
                created = client.post("/api/goals", json={"workspace": str(ws), "objective": "Say hello"})
                assert created.status_code == 201, created.text
                run_id = created.json()["run_id"]
                deadline = time.monotonic() + 60
                while not client.get(f"/api/runs/{run_id}").json()["awaiting_review"]:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
            stderr = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert code == 130, stderr
    assert "Traceback" not in stderr and "pausing 1 running goal" in stderr
    listed = reasonix("runs", "--json", "--workspace", str(ws), env=env)
    assert '"status": "paused"' in listed.stdout, listed.stdout


def test_reasonix_serve_refuses_a_non_loopback_address_without_allow_remote(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    proc = reasonix("serve", "--host", "0.0.0.0", "--port", "0", env=env, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--allow-remote" in proc.stderr and "risk" in proc.stderr


def test_reasonix_serve_help_is_light(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "orchestrator", "serve", "--help"],
        capture_output=True,
        text=True,
        env=clean_env(tmp_path / "home"),
        cwd=Path(__file__).resolve().parents[3],
        timeout=60,
    )
    assert proc.returncode == 0 and "--allow-remote" in proc.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert not imported & {"starlette", "hypercorn", "trio", "pydantic", "httpx"}


def test_sigterm_stops_the_service_with_status_0_and_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    proc = start_reasonix("serve", "--port", "0", "--workspace", str(workspace(tmp_path)), env=env)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().strip().removeprefix("reasonix serve: ")
        port = url.split(":")[2].split("/")[0]
        busy = reasonix("serve", "--port", port, env=env, timeout=60)
        assert busy.returncode == 2 and "Traceback" not in busy.stderr
        assert f"cannot listen on 127.0.0.1:{port}" in busy.stderr and "--port 0" in busy.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
