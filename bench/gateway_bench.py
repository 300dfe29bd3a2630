"""What the gateway costs a file tool: a read and a write through ``sessions.tools.gateway`` beside the path-based way
the file tools used before it (a small copy of it below: ``Path.resolve`` with symlinks followed, a check that the
result lies in the root, then an open by name; the write a temporary file beside the target, fsync, ``os.replace``).

    .venv/bin/python bench/gateway_bench.py [--rounds 2000] [--depth 1 --depth 6] [--size 4096]

Per depth (components from the root to the file), the median wall time of: the primitive read (``GatewayRoot.read``
vs the old resolve-then-open), the primitive write (``GatewayRoot.write`` vs the old resolve-then-atomic-write), and
the whole tool call (``read_file`` / ``write_file`` through the real tools, each in its own ``trio.run``, which
dominates) today. Wall-clock times on a shared machine: rerun before comparing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import stat
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sessions.tools import ToolContext  # noqa: E402
from sessions.tools.files.read_file import ReadFileArgs, ReadFileTool  # noqa: E402
from sessions.tools.files.write_file import WriteFileArgs, WriteFileTool  # noqa: E402
from sessions.tools.gateway import GatewayRoot  # noqa: E402


def old_resolve(root: Path, raw: str) -> Path:
    """The old way's check: symlinks followed by name, then the result compared with the root."""
    real_root = root.resolve()
    resolved = (real_root / raw).resolve()
    if not resolved.is_relative_to(real_root):
        raise PermissionError(raw)
    return resolved


def old_read(root: Path, raw: str, limit: int) -> bytes:
    path = old_resolve(root, raw)
    if not stat.S_ISREG(path.stat().st_mode):
        raise IsADirectoryError(raw)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(raw)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit)
    finally:
        os.close(fd)


def old_write(root: Path, raw: str, data: bytes) -> None:
    path = old_resolve(root, raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def median_us(rounds: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1e6


def bench(ws: Path, depth: int, rounds: int, size: int) -> list[tuple[str, float, float | None]]:
    rel = "/".join([f"d{i}" for i in range(depth - 1)] + ["target.py"])
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    text = ("x = 1  # padding\n" * (size // 17 + 1))[:size]
    (ws / rel).write_text(text)
    data = text.encode()
    gateway = GatewayRoot(ws)
    ctx = ToolContext(root=ws)

    def tool_read() -> None:
        trio.run(ReadFileTool().run, ReadFileArgs(path=rel, full=True), ctx)

    def tool_write() -> None:
        trio.run(WriteFileTool().run, WriteFileArgs(path=rel, content=text), ctx)

    return [
        ("read (primitive)", median_us(rounds, lambda: gateway.read(rel, limit=1 << 20)),
         median_us(rounds, lambda: old_read(ws, rel, 1 << 20))),
        ("write (primitive, fsync)", median_us(rounds // 4 or 1, lambda: gateway.write(rel, data)),
         median_us(rounds // 4 or 1, lambda: old_write(ws, rel, data))),
        ("read_file tool call", median_us(rounds // 4 or 1, tool_read), None),
        ("write_file tool call", median_us(rounds // 8 or 1, tool_write), None),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--depth", type=int, action="append")
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    depths = args.depth or [1, 6]
    print(f"gateway bench: median of {args.rounds} rounds (writes and tool calls fewer), file of {args.size} bytes")
    print(f"{'depth':>5}  {'operation':<26} {'gateway µs':>11} {'old way µs':>11} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as scratch:
        for depth in depths:
            ws = Path(scratch) / f"ws{depth}"
            ws.mkdir()
            for name, new, old in bench(ws, depth, args.rounds, args.size):
                then, ratio = (f"{old:>11.1f}", f"{new / old:6.2f}") if old else (f"{'–':>11}", f"{'–':>6}")
                print(f"{depth:>5}  {name:<26} {new:>11.1f} {then} {ratio}")


if __name__ == "__main__":
    main()
