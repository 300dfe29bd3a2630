"""The checkpoint cost per conversation turn on a 10,000-file workspace: a turn that writes one file, a turn that
writes none.

    .venv/bin/python bench/turn_checkpoint_bench.py [--files 10000] [--rounds 9]

What ``reasonix code`` and ``reasonix run`` add to a turn that may write: the workspace stored in the shadow store
before the turn (``git add -A`` on the persistent index, so only changed files are hashed again, and ``write-tree``)
and again after it; when the turn changed something, a commit and two ledger lines; when it changed nothing, no
commit and no line. The first turn of a new workspace hashes every file once (printed too). Wall-clock times; the
machine may be shared, so rerun before comparing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checkpoint_bench import git_version, make_repo  # noqa: E402
from orchestrator.checkpoints.ledger import Ledger  # noqa: E402
from orchestrator.checkpoints.turns import TurnCheckpoints  # noqa: E402


async def bench(files: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="reasonix-turn-ckpt-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        make_repo(ws, files)
        turns = TurnCheckpoints(ws, notify=lambda text: print(f"notice: {text}"))
        target = ws / "pkg00" / "sub0" / "mod00000.py"
        number = 0

        async def turn(write: bool) -> float:
            nonlocal number
            number += 1
            start = time.perf_counter()
            before = await turns.before()
            spent = time.perf_counter() - start
            if write:  # what the agent does during the turn is not the checkpoint's cost
                target.write_text(f"# turn {number}\n" + target.read_text())
            start = time.perf_counter()
            await turns.after(before, run_id="bench", number=number, note="bench")
            return spent + time.perf_counter() - start

        first = await turn(True)
        one = [await turn(True) for _ in range(rounds)]
        lines = len(Ledger(ws).read())
        none = [await turn(False) for _ in range(rounds)]
        assert len(Ledger(ws).read()) == lines, "a turn that wrote nothing must record nothing"

    print(f"workspace: {files} files, turn checkpoints in a shadow git store (git {git_version()})")
    print(f"first turn of the workspace (every file hashed)  {first * 1000:8.1f} ms")
    print(
        f"a turn that writes one file (before + after)     {statistics.median(one) * 1000:8.1f} ms median, "
        f"{min(one) * 1000:.1f} ms best of {rounds}"
    )
    print(
        f"a turn that writes nothing (nothing recorded)    {statistics.median(none) * 1000:8.1f} ms median, "
        f"{min(none) * 1000:.1f} ms best of {rounds}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    trio.run(bench, args.files, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
