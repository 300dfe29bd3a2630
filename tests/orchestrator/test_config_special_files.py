"""A repository's configuration files are read as bounded regular files: a FIFO ``reasonix.toml`` never hangs a start
(before, the open waited for a writer forever), and ``.mcp.json -> /dev/zero`` is refused instead of read until memory
runs out. Through the real CLI, which says which file and what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.config.files import CONFIG_MAX_BYTES, read_config_bytes
from orchestrator.config.model import load_config
from orchestrator.errors import ConfigError
from tests.orchestrator.run_support import ROOT


def _doctor(ws: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "doctor", "--offline", "--workspace", str(ws)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: the old code never returned
    )


def test_a_fifo_reasonix_toml_is_refused_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "reasonix.toml")
    done = _doctor(ws)
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "reasonix.toml" in said and "not a regular file" in said and "fix or remove it" in said


def test_a_config_file_linked_to_dev_zero_is_refused_not_read_whole(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").symlink_to("/dev/zero")
    (ws / "reasonix.toml").symlink_to("/dev/zero")
    done = _doctor(ws)
    assert done.returncode != 0
    assert "leads outside the workspace" in done.stdout + done.stderr


def test_a_reasonix_toml_linked_to_the_users_own_config_is_not_read(tmp_path: Path) -> None:
    """Follow-up part d: a workspace config file is read through the gateway. On 05d9218 the link was followed and
    the user's own file (with the key) became the workspace's layer."""
    user_dir = tmp_path / "xdg" / "reasonix"
    user_dir.mkdir(parents=True)
    (user_dir / "config.toml").write_text('api_key = "sk-SECRET-43"\n[agents]\nmax_requests = 7\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reasonix.toml").symlink_to(user_dir / "config.toml")
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "elsewhere")}
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=ws, env=env)
    said = str(caught.value)
    assert "reasonix.toml" in said and "leads outside the workspace" in said and "sk-SECRET" not in said
    (ws / "reasonix.toml").unlink()
    (ws / "conf").mkdir()
    (ws / "conf" / "project.toml").write_text("[agents]\nmax_requests = 7\n")
    (ws / "reasonix.toml").symlink_to("conf/project.toml")  # a link that stays inside is followed
    assert load_config(workspace=ws, env=env).config.agents.max_requests == 7


@pytest.mark.parametrize("name", ["reasonix.toml", "reasonix.local.toml", ".mcp.json"])
def test_a_workspace_config_file_linked_to_proc_self_environ_is_refused(tmp_path: Path, name: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / name).symlink_to("/proc/self/environ")
    done = _doctor(ws)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and name in said and "leads outside the workspace" in said, said


def test_reasonix_trust_refuses_a_linked_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("[agents]\nmax_requests = 7\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reasonix.toml").symlink_to(outside)
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "trust", "--workspace", str(ws)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "x")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "leads outside the workspace" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "x" / "reasonix" / "trusted.json").exists()


def test_a_config_file_past_the_bound_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "reasonix.toml"
    big.write_bytes(b"#" * (CONFIG_MAX_BYTES + 1))
    with pytest.raises(OSError, match="larger than 1024 KiB"):
        read_config_bytes(big)
    big.write_bytes(b"x = 1\n")
    assert read_config_bytes(big) == b"x = 1\n"
