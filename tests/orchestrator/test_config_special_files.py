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
    assert "not a regular file" in done.stdout + done.stderr


def test_a_config_file_past_the_bound_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "reasonix.toml"
    big.write_bytes(b"#" * (CONFIG_MAX_BYTES + 1))
    with pytest.raises(OSError, match="larger than 1024 KiB"):
        read_config_bytes(big)
    big.write_bytes(b"x = 1\n")
    assert read_config_bytes(big) == b"x = 1\n"
