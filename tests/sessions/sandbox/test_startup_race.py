"""Reasonix SIGKILLed while a sandbox is still starting: the process ``spawn`` started dies with it.

bubblewrap arms ``--die-with-parent`` only after its clone, and as root a ``sh`` enters the command's cgroup before
it even runs. ``spawn`` arms ``PR_SET_PDEATHSIG`` before the launch runs (``armed``: ``setpriv``, then a check that
the parent did not die first; ``die_with_parent`` between fork and exec where there is no ``setpriv``), so a kill
anywhere in that gap takes the launch down. Each round of the driver below is one Reasonix (a process forked from
the driver) that starts a real sandboxed ``sleep TAG`` and is SIGKILLed a staggered moment later. So that the kill
is known to fall in the gap, the launch is stopped (SIGSTOP) first and its children read: a round whose bubblewrap
has already cloned is bubblewrap's own window (DESIGN §5, Safety), cleaned up and not counted. The driver resumes
the launch after the kill (SIGCONT): without the fix it goes on and starts the sandbox, with it it is already dead.

On a loaded machine every staggered round may reach the clone before it is stopped. So the first round does not
depend on timing: its bubblewrap is a script that stops itself before it execs the real one, so that round is killed
in the gap, armed and not yet sandboxed, however slow the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.leftovers import assert_gone, pids_running

ROUNDS = 30
STAGGER_US = 100
"""Round ``i`` is killed ``i * STAGGER_US`` microseconds after ``spawn`` returned."""

_DRIVER = r"""
import ctypes, json, os, select, signal, sys, time
from dataclasses import replace
from pathlib import Path
from sessions.sandbox import SandboxPolicy, sandbox_for
from sessions.sandbox.spawn import spawn

ws, rounds, stagger_us, tag_base = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stopping_bwrap = sys.argv[5]
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the orphaned launch comes to us, to wait on
box = sandbox_for(SandboxPolicy(mode="workspace-write"))
self_stopping = replace(box, bwrap=stopping_bwrap, userns=box.uses_userns())

def children(pid):
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        kids += [int(k) for k in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return kids

def stopped(pid):
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t")

def reasonix(report, tag, delay_s):
    # One Reasonix: start the sandboxed command, let it run delay_s, stop it and see how far it got, die. A negative
    # delay: the launch's bubblewrap stops itself before it runs (the round that does not depend on timing).
    launch = (self_stopping if delay_s < 0 else box).wrap(["sleep", tag], workspace=ws, cwd=ws, env=dict(os.environ))
    started = spawn(launch.argv, cwd=ws, env=launch.env)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < delay_s:
        pass
    if delay_s >= 0:
        os.kill(started.pid, signal.SIGSTOP)
    while not stopped(started.pid):
        pass
    kids = children(started.pid)
    cgroup = str(launch.bounds.cgroup) if launch.bounds and launch.bounds.cgroup else None
    os.write(report, json.dumps({"launch": started.pid, "cloned": bool(kids), "cgroup": cgroup}).encode())
    if kids:  # bubblewrap got past its clone: not the window under test, and its child is not armed yet
        for pid in (*kids, started.pid):
            os.kill(pid, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)

results = []
for i in range(rounds):
    tag = str(tag_base + i)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        reasonix(write_end, tag, (i - 1) * stagger_us / 1e6 if i else -1.0)
    os.close(write_end)
    round_ = json.loads(os.read(read_end, 4096))
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    launch = round_["launch"]
    pidfd = os.pidfd_open(launch)  # ours to reap (subreaper), so its pid stays its own until then
    os.kill(launch, signal.SIGCONT)
    round_["died"] = bool(select.select([pidfd], [], [], 5)[0])
    os.close(pidfd)
    if round_["died"]:
        os.waitpid(launch, 0)
    while True:  # what else came to us (a cloned round's bubblewrap child)
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    if round_["cgroup"]:
        try:
            os.rmdir(round_["cgroup"])
        except OSError:
            pass
    round_["tag"] = tag
    results.append(round_)
    if not round_["died"]:
        break
print(json.dumps(results))
"""


def test_a_sigkill_while_the_sandbox_starts_leaves_nothing_running(bwrap: str, ws: Path, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    tag_base = 9_070_000 + (os.getpid() % 1000) * 100
    stopping = tmp_path / "bwrap-stops-first"
    stopping.write_text(f'#!/bin/sh\nkill -STOP $$\nexec {shutil.which(bwrap) or bwrap} "$@"\n')
    stopping.chmod(0o755)
    args = [str(ws), str(ROUNDS), str(STAGGER_US), str(tag_base), str(stopping)]
    try:
        done = subprocess.run([sys.executable, "-c", _DRIVER, *args], env=env, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        rounds = json.loads(done.stdout)
        in_gap = [r for r in rounds if not r["cloned"]]
        survived = [r for r in in_gap if not r["died"]]
        assert not survived, f"a launch outlived its SIGKILLed parent: {survived}"
        assert rounds[0]["died"] and not rounds[0]["cloned"], f"the round stopped before bubblewrap ran: {rounds[0]}"
        for r in in_gap:
            assert_gone(r["tag"], f"sleep {r['tag']} started after its reasonix was SIGKILLed")
    finally:
        for i in range(ROUNDS):
            for pid in pids_running(str(tag_base + i)):
                os.kill(pid, signal.SIGKILL)


_ORPHAN = r"""
import os, signal
from sessions.sandbox.reaper import die_with_parent

arm = die_with_parent()  # armed for children of this process
child = os.fork()
if child == 0:
    # A process whose parent is not the one that prepared `arm`: what a child sees when Reasonix died between the
    # fork and the prctl (it was reparented), so no death signal would ever come. It must not go on.
    grandchild = os.fork()
    if grandchild == 0:
        arm()
        os._exit(0)
    _, status = os.waitpid(grandchild, 0)
    os._exit(0 if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL else 1)
_, orphaned = os.waitpid(child, 0)
child = os.fork()
if child == 0:
    arm()  # the parent it was made for: goes on
    os._exit(7)
_, kept = os.waitpid(child, 0)
print(os.waitstatus_to_exitcode(orphaned), os.waitstatus_to_exitcode(kept))
"""


def test_a_child_whose_parent_died_before_the_prctl_kills_itself() -> None:
    """``die_with_parent``, the fallback without ``setpriv`` (test_armed.py pins the shim's own check)."""
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", _ORPHAN], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "7"]
