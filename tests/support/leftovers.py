"""Finding the processes a test's command left running, by an argument of their command line (a ``sleep 9061``'s
``9061``), and waiting for them to be gone."""

from __future__ import annotations

import os
import select
from pathlib import Path


def pids_running(argument: str) -> list[int]:
    """The live (not zombie) processes whose command line has ``argument`` as one of its words."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if argument.encode() in cmdline and state != "Z":
                pids.append(int(entry))
    return pids


def assert_gone(argument: str, message: str) -> None:
    """Each process still listed must exit within 10 s: the kernel tears a PID namespace down asynchronously (the
    processes are SIGKILLed when its init exits, and a loaded machine may list one for a moment after)."""
    for pid in pids_running(argument):
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            assert select.select([fd], [], [], 10)[0], f"{message} (pid {pid})"
        finally:
            os.close(fd)
