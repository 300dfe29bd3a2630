"""Pins of probing bubblewrap (:mod:`sessions.sandbox.probe`) with stand-in ``bwrap`` programs in ``tmp_path``: a probe
that hangs is given up after :data:`~sessions.sandbox.probe.TIMEOUT_S`, and what a failing one wrote is read whatever
its bytes (test_choose_pins.py pins the arguments and the ordinary failures)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sessions.sandbox import probe
from sessions.sandbox.probe import bwrap_works, reports_exec

PROBE = ["--ro-bind", "/", "/", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--die-with-parent", "true"]


def program(folder: Path, body: str) -> str:
    folder.mkdir(parents=True)
    path = folder / "bwrap"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_a_probe_that_hangs_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It would answer after a second, working: too late, it was killed after TIMEOUT_S (a fifth of one here)."""
    monkeypatch.setattr(probe, "TIMEOUT_S", 0.2)
    slow = program(tmp_path / "slow", "exec sleep 1")
    assert bwrap_works(slow) == str(subprocess.TimeoutExpired([slow, *PROBE], 0.2))
    helpful = program(tmp_path / "helpful", 'sleep 1; echo "  --json-status-fd FD"')
    assert not reports_exec(helpful)


def test_a_failing_probe_says_why_whatever_its_bytes(tmp_path: Path) -> None:
    garbled = program(tmp_path / "garbled", r"printf '\377bwrap: uid map: Permission denied\376\n' >&2; exit 1")
    assert bwrap_works(garbled) == "\ufffdbwrap: uid map: Permission denied\ufffd"
