"""The sandbox through the CLI, as an attacker's scripted replies would try it: `reasonix run` against the emulator."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.orchestrator.run_support import clean_env, emulator_process, emulator_stats, reasonix
from tests.support.bwrap import require_bwrap

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

KEY = "sk-test-key-that-must-never-leak-0123456789"


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="reasonix-outside-", dir="/var/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    return ws


def _bash_script(*commands: str) -> dict[str, Any]:
    replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]} for command in commands
    ]
    return {"sessions": [{"key": "executor", "replies": [*replies, {"content": "done"}]}]}


@pytest.mark.bwrap
def test_the_key_reaches_no_command_file_recording_or_output(tmp_path: Path, outside: Path) -> None:
    require_bwrap()
    ws = _workspace(tmp_path)
    env = {**clean_env(tmp_path), "DEEPSEEK_API_KEY": KEY, "DS_SECOND": KEY}
    attack = (
        "env; tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done;"
        f" echo pwned > {outside}/x; echo inside > inside.txt; env > env.txt"
    )
    script = _bash_script(attack)
    recording = tmp_path / "run.json"
    with emulator_process(script, tmp_path, env) as url:
        proc = reasonix(
            "run",
            "look around",
            "--workspace",
            str(ws),
            "--base-url",
            url,
            "--json",
            "--record",
            str(recording),
            env=env,
        )
        sent = json.dumps(emulator_stats(url))
    assert proc.returncode == 0, proc.stderr
    assert not (outside / "x").exists()
    assert (ws / "inside.txt").read_text() == "inside\n"
    assert "PATH=" in (ws / "env.txt").read_text()
    assert KEY not in proc.stdout and KEY not in proc.stderr and KEY not in sent
    assert KEY not in recording.read_text()
    for path in [*ws.rglob("*"), *tmp_path.glob("*.json")]:
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    journal = next(ws.glob(".reasonix/runs/*/executor.jsonl")).read_text()
    assert "Read-only file system" in journal and "DEEPSEEK_API_KEY" not in journal


@pytest.mark.bwrap
def test_a_read_only_run_runs_git_log_and_cannot_write(tmp_path: Path) -> None:
    require_bwrap()
    ws = _workspace(tmp_path)
    (ws / ".git").rmdir()
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("one")
    subprocess.run(["git", "-C", str(ws), "add", "a.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(ws), "commit", "-qm", "first commit here"], check=True, env={**clean_env(tmp_path), **git}
    )
    env = clean_env(tmp_path)
    script = _bash_script("git log --oneline; echo changed > a.txt; touch new.txt")
    with emulator_process(script, tmp_path, env) as url:
        proc = reasonix("run", "history", "--workspace", str(ws), "--base-url", url, "--read-only", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    journal = next(ws.glob(".reasonix/runs/*/executor.jsonl")).read_text()
    assert "first commit here" in journal and "Read-only file system" in journal
    assert (ws / "a.txt").read_text() == "one" and not (ws / "new.txt").exists()


def test_an_untrusted_redirect_is_refused_and_nothing_is_sent_until_trusted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = {**clean_env(tmp_path), "AWS_SECRET_ACCESS_KEY": KEY}
    with emulator_process(_bash_script("true"), tmp_path, env) as url:
        (ws / "reasonix.toml").write_text(f'base_url = "{url}"\napi_key_env = "AWS_SECRET_ACCESS_KEY"\n')
        refused = reasonix("run", "hello", "--workspace", str(ws), "--json", env=env)
        assert emulator_stats(url)["total"]["requests"] == 0
        assert refused.returncode == 2
        assert "base_url: refused" in refused.stderr and "api_key_env: refused" in refused.stderr
        assert f"reasonix trust --workspace {ws}" in refused.stderr
        trusted = reasonix("trust", "--workspace", str(ws), env=env)
        assert trusted.returncode == 0 and "base_url" in trusted.stdout
        honoured = reasonix("run", "hello", "--workspace", str(ws), "--json", env=env)
        assert honoured.returncode == 0, honoured.stderr
        assert emulator_stats(url)["total"]["requests"] > 0
