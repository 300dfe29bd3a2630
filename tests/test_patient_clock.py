"""The patient clock's driver waits for live child processes only: a zombie nobody reaps (another test's leftover)
must not hold virtual time still forever (it hung a loaded suite run's outage test)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.patient_clock import live_children


def test_a_live_child_holds_the_clock_and_a_zombie_does_not() -> None:
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert live.pid in live_children()
    finally:
        assert live.stdin is not None
        live.stdin.close()
        # wait for it to end without reaping it: it stays a zombie
        os.waitid(os.P_PID, live.pid, os.WEXITED | os.WNOWAIT)
    assert live.pid not in live_children()
    live.wait()
