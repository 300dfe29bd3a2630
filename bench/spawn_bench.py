"""What arming the death signal costs a sandboxed command (``sessions/sandbox/spawn.py``), before and after.

Before: ``spawn`` passed ``subprocess.Popen`` a ``preexec_fn`` (``die_with_parent``: ``PR_SET_PDEATHSIG`` and the
parent check between fork and exec), which makes CPython fork instead of vfork: the page tables of the whole process
are copied, so the cost grows with its size. Now: ``armed`` starts the command through ``setpriv --pdeathsig KILL``
and a ``sh`` that checks its parent, with no ``preexec_fn``, so CPython vforks. In a process the size of a Reasonix
session (the orchestrator imported; ``--ballast-mb`` more touched), interleaved, N times each:

- bubblewrap's ``bash -c true`` started three ways: vfork unarmed (no death signal at all: the floor), fork with
  ``die_with_parent`` (before), vfork through the ``setpriv`` shim (now); the median time until ``Popen`` returns
  and until the command has exited;
- the ``bash`` tool running ``true`` in bubblewrap (``dispatch``, as a session runs it), with ``spawn`` arming the old
  way and the new way; the median per command, and the CPU of building its launch, which the arming does not touch.

Wall times on a shared machine follow its load; the CPU of this process and its children is steadier.

    .venv/bin/python bench/spawn_bench.py [N] [--ballast-mb MB]
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import trio

import sessions.sandbox.spawn as spawn_module
from sessions.sandbox import BubblewrapSandbox, SandboxPolicy, release, sandbox_unavailable_reason
from sessions.sandbox.reaper import Armed, armed, die_with_parent
from sessions.tools import PreparedCall, ToolContext, default_registry, dispatch


def unarmed(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: object = None) -> Armed:
    return Armed(list(argv), None)


def forked(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: object = None) -> Armed:
    return Armed(list(argv), die_with_parent())


WAYS: dict[str, Callable[..., Armed]] = {
    "vfork, unarmed (floor)": unarmed,
    "fork + die_with_parent (before)": forked,
    "vfork + setpriv shim (now)": armed,
}


def _cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def once(start: Armed, env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Milliseconds until ``Popen`` returns, until the command exited, and of CPU (this process and its children)."""
    cpu = _cpu()
    begin = time.perf_counter()
    popen = subprocess.Popen(
        start.argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=start.preexec_fn,
    )
    started = time.perf_counter()
    popen.wait()
    ended = time.perf_counter()
    return (started - begin) * 1000, (ended - begin) * 1000, (_cpu() - cpu) * 1000


async def tool_runs(ctx: ToolContext, n: int) -> dict[str, list[tuple[float, float]]]:
    """The bash tool running ``true``, alternating the old arming and the new one in ``spawn``."""
    registry = default_registry(use_ripgrep=False)
    call = PreparedCall(id="c", name="bash", args={"command": "true"})
    runs: dict[str, list[tuple[float, float]]] = {"before": [], "now": []}
    for _ in range(n):
        for name, way in (("before", forked), ("now", armed)):
            vars(spawn_module)["armed"] = way  # what spawn() calls
            cpu = _cpu()
            begin = time.perf_counter()
            results = await dispatch(registry, [call], ctx, read_only=False)
            runs[name].append(((time.perf_counter() - begin) * 1000, (_cpu() - cpu) * 1000))
            assert not results[0].is_error, results[0]
    vars(spawn_module)["armed"] = armed
    return runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=100)
    parser.add_argument("--ballast-mb", type=int, default=0)
    args = parser.parse_args()
    for module in ("orchestrator.build", "orchestrator.cli.main", "orchestrator.repl.loop"):  # a session's size
        importlib.import_module(module)
    problem = sandbox_unavailable_reason()
    bwrap, bash = shutil.which("bwrap"), shutil.which("bash")
    if problem is not None or bwrap is None or bash is None:
        print(f"bubblewrap: not measured ({problem})")
        return
    if armed(["true"]).preexec_fn is not None:
        print("no setpriv with --pdeathsig here: the new way falls back to the old one; not measured")
        return
    ballast = bytearray(os.urandom(1)) * (args.ballast_mb * 1024 * 1024)  # touched: resident
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    box = BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy())
    load = os.getloadavg()
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for _ in range(args.n):
            for name, way in WAYS.items():
                launch = box.wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={})
                runs[name].append(once(way(launch.argv, launch.env, ws), dict(launch.env), ws))
                release(launch.bounds)
        tool = trio.run(tool_runs, ToolContext(root=ws, sandbox=box), args.n)
        wraps = []
        for _ in range(args.n):
            cpu = time.process_time()
            release(box.wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={}).bounds)
            wraps.append((time.process_time() - cpu) * 1000)
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; RSS {rss_mb:.0f} MB; N={args.n} each, interleaved")
    print("bubblewrap `bash -c true`: medians of wall time; CPU (this process and its children) a launch, mean")
    for name, rows in runs.items():
        popen_ms = statistics.median(r[0] for r in rows)
        total_ms = statistics.median(r[1] for r in rows)
        cpu_ms = statistics.mean(r[2] for r in rows)
        print(f"  {name:32} Popen returns {popen_ms:6.2f} ms   exited {total_ms:6.2f} ms   CPU {cpu_ms:6.2f} ms")
    before, now = runs["fork + die_with_parent (before)"], runs["vfork + setpriv shim (now)"]
    wall = statistics.median(r[1] for r in now) / statistics.median(r[1] for r in before)
    cpu = statistics.mean(r[2] for r in now) / statistics.mean(r[2] for r in before)
    print(f"  now/before: wall {wall:.2f}x, CPU {cpu:.2f}x")
    print("bash tool running `true` in bubblewrap, a command: median wall, mean CPU")
    for name, label in (("before", "before (fork + die_with_parent)"), ("now", "now (vfork + setpriv shim)")):
        wall_ms = statistics.median(r[0] for r in tool[name])
        cpu_ms = statistics.mean(r[1] for r in tool[name])
        print(f"  {label:32} {wall_ms:6.2f} ms   CPU {cpu_ms:6.2f} ms")
    wall = statistics.median(r[0] for r in tool["now"]) / statistics.median(r[0] for r in tool["before"])
    cpu = statistics.mean(r[1] for r in tool["now"]) / statistics.mean(r[1] for r in tool["before"])
    print(f"  now/before: wall {wall:.2f}x, CPU {cpu:.2f}x")
    print(f"  of which building the launch (its mounts, host sockets, histories): CPU {statistics.mean(wraps):.2f} ms")
    del ballast


if __name__ == "__main__":
    main()
