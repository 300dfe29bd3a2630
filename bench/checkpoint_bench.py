"""The cost of a checkpoint on a 10,000-file repository with one changed file (and the first one, and undo).

    .venv/bin/python bench/checkpoint_bench.py [--files 10000] [--rounds 9]

A checkpoint is what the goal loop takes before each step: ``git add -A`` into the shadow store's own index (whose
stat cache means only the changed file is hashed again), ``write-tree``, ``commit-tree``, ``update-ref``, the
``diff --name-status`` against the previous checkpoint, and a ledger line. Printed: the first checkpoint (every file
hashed), one changed file (median and best of the rounds), nothing changed, and planning + applying the undo of a
one-file step. Wall-clock times; the machine is shared, so rerun before comparing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.checkpoints.git import ShadowRepo  # noqa: E402
from orchestrator.checkpoints.snapshot import take_checkpoint  # noqa: E402
from orchestrator.checkpoints.undo import apply_undo, plan_undo  # noqa: E402


def make_repo(root: Path, files: int) -> None:
    """``files`` source-like files of about 1.5 kB in 100 directories, committed in the user's own git."""
    for i in range(files):
        d = root / f"pkg{i % 100:02d}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "def f(x):\n    return x + 1\n" * 50)
    (root / ".gitignore").write_text("*.pyc\n__pycache__/\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


async def timed(fn: object) -> float:
    start = time.perf_counter()
    await fn()  # type: ignore[operator]
    return time.perf_counter() - start


async def bench(files: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="reasonix-ckpt-") as tmp:
        ws = Path(tmp)
        make_repo(ws, files)
        repo = ShadowRepo(ws)
        target = ws / "pkg00" / "sub0" / "mod00000.py"
        seq = 0

        async def checkpoint() -> None:
            nonlocal seq
            seq += 1
            await take_checkpoint(repo, run_id="bench", step_id=f"S{seq}", kind="before")

        first = await timed(checkpoint)
        one: list[float] = []
        for i in range(rounds):
            target.write_text(f"# changed {i}\n" + target.read_text())
            one.append(await timed(checkpoint))
        unchanged = [await timed(checkpoint) for _ in range(rounds)]

        async def step_and_undo() -> None:
            await take_checkpoint(repo, run_id="undo-bench", step_id="S1", kind="before")
            target.write_text("# the step's edit\n")
            await take_checkpoint(repo, run_id="undo-bench", step_id="S1", kind="after")

        await step_and_undo()
        start = time.perf_counter()
        plan = await plan_undo(repo, run_id="undo-bench")
        await apply_undo(repo, plan)
        undo = time.perf_counter() - start

    print(f"repository: {files} files, checkpoints in a shadow git store (git {git_version()})")
    print(f"first checkpoint (every file hashed)      {first * 1000:8.1f} ms")
    print(
        f"one changed file                          {statistics.median(one) * 1000:8.1f} ms median, "
        f"{min(one) * 1000:.1f} ms best of {rounds}"
    )
    print(f"nothing changed                           {statistics.median(unchanged) * 1000:8.1f} ms median")
    print(f"undo of a one-file step (plan + restore)  {undo * 1000:8.1f} ms")


def git_version() -> str:
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
    return out.split()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    trio.run(bench, args.files, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
