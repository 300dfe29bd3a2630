"""What arming the death signal before exec costs a sandboxed command (``sessions/sandbox/spawn.py``).

``spawn`` passes ``subprocess.Popen`` a ``preexec_fn`` (``die_with_parent``: ``PR_SET_PDEATHSIG`` and the parent
check), which makes CPython fork instead of vfork: the page tables of the whole process are copied, so the cost grows
with its size. Here a process the size of a Reasonix session (the orchestrator imported; ``--ballast-mb`` more
touched) starts bubblewrap's ``bash -c true`` N times each way, interleaved: with the ``preexec_fn`` (as ``spawn``
does) and without it (vfork, as before). Printed per way: the median time until ``Popen`` returns (the fork or vfork
and the exec) and until the command has exited.

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
from collections.abc import Callable
from pathlib import Path

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy, release, sandbox_unavailable_reason
from sessions.sandbox.reaper import die_with_parent


def once(argv: list[str], env: dict[str, str], cwd: Path, preexec: Callable[[], None] | None) -> tuple[float, float]:
    start = time.perf_counter()
    popen = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=preexec,
    )
    started = time.perf_counter()
    popen.wait()
    return (started - start) * 1000, (time.perf_counter() - start) * 1000


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
    ballast = bytearray(os.urandom(1)) * (args.ballast_mb * 1024 * 1024)  # touched: resident
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    box = BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy())
    ways: dict[str, list[tuple[float, float]]] = {"vfork (no preexec_fn)": [], "fork + die_with_parent": []}
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for _ in range(args.n):
            for name in ways:
                launch = box.wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={})
                preexec = die_with_parent() if name.startswith("fork") else None
                ways[name].append(once(list(launch.argv), dict(launch.env), ws, preexec))
                release(launch.bounds)
    print(f"process RSS {rss_mb:.0f} MB, {args.n} launches each way, interleaved; medians:")
    for name, runs in ways.items():
        popen_ms = statistics.median(r[0] for r in runs)
        total_ms = statistics.median(r[1] for r in runs)
        print(f"  {name:24} Popen returns {popen_ms:6.2f} ms   command exited {total_ms:6.2f} ms")
    del ballast


if __name__ == "__main__":
    main()
