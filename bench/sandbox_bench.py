"""What the sandbox costs per command: ``bash -c true`` plain, through the allowlisted environment only (no sandbox),
and inside bubblewrap (workspace-write, no network; with its default bounds, and with none), each started and
awaited N times; also through the bash tool. The bounds add ``prlimit`` inside and, as root, a pids cgroup (one
``sh`` that enters it); the masks (``/run``, host sockets, ``.git``, histories) add a few mounts.

    .venv/bin/python bench/sandbox_bench.py [N]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from sessions.sandbox import BubblewrapSandbox, NoSandbox, SandboxPolicy, sandbox_unavailable_reason
from sessions.tools import PreparedCall, ToolContext, default_registry, dispatch


def per_command_ms(argv: list[str], env: dict[str, str], n: int, cwd: Path) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            subprocess.run(argv, env=env, cwd=cwd, check=True, stdin=subprocess.DEVNULL)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1000


async def tool_ms(ctx: ToolContext, n: int) -> float:
    registry = default_registry(use_ripgrep=False)
    call = PreparedCall(id="c", name="bash", args={"command": "true"})
    start = time.perf_counter()
    for _ in range(n):
        await dispatch(registry, [call], ctx, read_only=False)
    return (time.perf_counter() - start) / n * 1000


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    bash = shutil.which("bash")
    assert bash is not None
    problem = sandbox_unavailable_reason()
    bwrap = shutil.which("bwrap")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        plain = NoSandbox().wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={})
        print(f"per command, best of 3 runs of {n}:")
        base = per_command_ms(list(plain.argv), plain.env, n, ws)
        print(f"  bash -c true, plain:                 {base:7.2f} ms")
        if problem is None and bwrap is not None:
            box = BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy())
            boxed = box.wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={})
            cost = per_command_ms(list(boxed.argv), boxed.env, n, ws)
            print(f"  bash -c true, in bubblewrap:         {cost:7.2f} ms  ({cost - base:+.2f} ms)")
            unbounded = BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy(tmp_mb=0, max_processes=0, memory_mb=0))
            free = unbounded.wrap([bash, "-c", "true"], workspace=ws, cwd=ws, env={})
            loose = per_command_ms(list(free.argv), free.env, n, ws)
            print(f"  bash -c true, bubblewrap, no bounds: {loose:7.2f} ms  ({loose - base:+.2f} ms)")
            t_plain = trio.run(tool_ms, ToolContext(root=ws), n)
            t_box = trio.run(tool_ms, ToolContext(root=ws, sandbox=box), n)
            print(f"  bash tool, no sandbox (subreaper):   {t_plain:7.2f} ms")
            print(f"  bash tool, in bubblewrap:            {t_box:7.2f} ms  ({t_box - t_plain:+.2f} ms)")
        else:
            print(f"  bubblewrap: not measured ({problem})")


if __name__ == "__main__":
    main()
