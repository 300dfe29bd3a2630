"""A process that swaps two names in a tight loop with ``renameat2(RENAME_EXCHANGE)`` (through ctypes), as a
sandboxed background job can: for the race tests of the gateway (issue 43 item 4)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SWAPPER = r"""
import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
fn = getattr(libc, "renameat2", None)
nr = {"x86_64": 316, "aarch64": 276}.get(platform.machine())
a, b, stop = (s.encode() for s in sys.argv[1:4])
def exchange():
    if fn is not None:
        return fn(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    return libc.syscall(nr, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
if exchange() != 0:
    print("renameat2 failed", ctypes.get_errno(), flush=True)
    sys.exit(1)
count = 1
print("ready", flush=True)
while not os.path.exists(stop):
    for _ in range(64):
        exchange()
        count += 1
if count % 2:
    exchange()  # leave the names as they were
print(count, flush=True)
"""


@contextmanager
def swapping(where: Path, a: str, b: str) -> Iterator[list[int]]:
    """Swap ``where/a`` and ``where/b`` until the block ends; the list holds the number of swaps afterwards."""
    stop = where.parent / f".stop-{a}-{b}"
    stop.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, a, b, str(stop)], cwd=where, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()  # bounded by the child: it prints at once or exits
    assert first == "ready", first
    counted: list[int] = []
    try:
        yield counted
    finally:
        stop.touch()
        out, _ = proc.communicate(timeout=60)
        stop.unlink(missing_ok=True)
    counted.append(int(out.strip()))
