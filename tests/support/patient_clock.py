"""Virtual time for a test whose run also waits on real work (git for its checkpoints, verify commands, a notify
command): the clock jumps to the next deadline only once every task has been blocked for half a real second *and*
no child process of the test and no trio worker thread is running. Trio's autojump cannot tell a task waiting on a
real process or a thread from one waiting on a timer, so with any fixed threshold a loaded machine's slow git or
verify lets a timeout fire that no real run would see.

Use: a ``MockClock()`` without autojump as the test's clock, and :func:`drive` started in the test's nursery."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import trio
import trio.testing

IDLE_S = 0.5
"""Real seconds every task must stay blocked before the driver looks (also how often it looks while work runs)."""


def live_children() -> set[int]:
    """The live child processes of every thread of this process. A zombie is not work in flight: it has ended, and
    one that nobody reaps (another test's leftover) would otherwise hold the clock still forever."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            pids = (task / "children").read_text().split()
        except OSError:  # the thread ended while we looked
            continue
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):  # gone meanwhile
                continue
            if state != "Z":
                found.add(int(pid))
    return found


def threads_working() -> bool:
    """Whether a trio worker thread runs a job now: ``trio.to_thread.run_sync`` names its thread ``FN from TASK``
    for the job's length (an idle worker is ``Trio thread N``)."""
    return any(" from " in thread.name for thread in threading.enumerate())


async def drive(clock: trio.testing.MockClock) -> None:
    """Jump ``clock`` to the next deadline whenever the run is idle with no child process of its own (one that was
    not there when the driver started: a long-lived helper of an earlier test, such as the sandbox's network anchor,
    is not this run's work) and no worker thread busy; forever (cancel it)."""
    before = live_children()
    while True:
        await trio.testing.wait_all_tasks_blocked(IDLE_S)
        if live_children() - before or threads_working():
            continue  # real work in flight: its end wakes a task; look again after another idle spell
        ahead = trio.lowlevel.current_statistics().seconds_to_next_deadline
        if ahead != math.inf:
            clock.jump(max(ahead, 0.0))
