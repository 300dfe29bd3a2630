"""The cost of a parallel branch on a 10,000-file repository: opening its copy, merging it back, discarding it.

    .venv/bin/python bench/branch_bench.py [--files 10000] [--rounds 5]

Opening a branch snapshots the live workspace into the checkpoints' shadow store (from a copy of its index, so with a
checkpoint already taken only changed files are hashed), and checks the snapshot out as a worktree of the shadow
store under the run directory (every file written), with ignored directories symlinked. Merging back hashes the
branch and the live workspace again (stat caches make that cheap) and applies the branch's ten edited files; the live
workspace has ten edits of its own, in other files. Printed: the first open (no checkpoint yet: every file hashed),
then the median and best over the rounds of open, merge and discard. Wall-clock times; the machine is shared.
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

from orchestrator.branches import BranchWorkspace  # noqa: E402
from orchestrator.checkpoints.git import ShadowRepo  # noqa: E402
from orchestrator.checkpoints.snapshot import store_workspace  # noqa: E402


def make_repo(root: Path, files: int) -> None:
    """``files`` source-like files of about 1.5 kB in 100 directories, committed, and a 2,000-file ignored .venv."""
    for i in range(files):
        d = root / f"pkg{i % 100:02d}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "def f(x):\n    return x + 1\n" * 50)
    venv = root / ".venv" / "lib"
    venv.mkdir(parents=True)
    for i in range(2000):
        (venv / f"dep{i}.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("*.pyc\n__pycache__/\n.venv/\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env={**env, "PATH": "/usr/bin:/bin"})


def edit(root: Path, start: int, n: int = 10) -> list[str]:
    paths = []
    for i in range(start, start + n):
        rel = f"pkg{i % 100:02d}/sub{i % 7}/mod{i:05d}.py"
        p = root / rel
        p.write_text(p.read_text() + f"# edited {time.time()}\n")
        paths.append(rel)
    return paths


async def main(files: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        make_repo(ws, files)
        run_dir = ws / ".reasonix" / "runs" / "bench"
        t = time.perf_counter()
        first = await BranchWorkspace.open(ws, run_dir, "cold")
        cold = time.perf_counter() - t
        await first.discard()
        await store_workspace(ShadowRepo(ws), "checkpoint")  # what the goal loop has taken before a step
        opens, merges, discards = [], [], []
        for r in range(rounds):
            t = time.perf_counter()
            b = await BranchWorkspace.open(ws, run_dir, f"s{r}")
            opens.append(time.perf_counter() - t)
            mine = edit(b.path, r * 20)
            edit(ws, r * 20 + 10)
            t = time.perf_counter()
            out = await b.merge_back(mine)
            merges.append(time.perf_counter() - t)
            assert out.merged and len(out.changed) == 10, out.reason
            t = time.perf_counter()
            await b.discard()
            discards.append(time.perf_counter() - t)
            await store_workspace(ShadowRepo(ws), "checkpoint")

    def fig(xs: list[float]) -> str:
        return f"median {statistics.median(xs) * 1000:7.0f} ms   best {min(xs) * 1000:7.0f} ms"

    print(f"branch on {files} files (+2000 ignored in .venv), {rounds} rounds")
    print(f"  first open (no checkpoint yet)   {cold * 1000:7.0f} ms")
    print(f"  open (after a checkpoint)        {fig(opens)}")
    print(f"  merge back (10 + 10 edits)       {fig(merges)}")
    print(f"  discard                          {fig(discards)}")
    both = [a + b for a, b in zip(opens, merges, strict=True)]
    print(f"  open + merge                     {fig(both)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trio.run(main, args.files, args.rounds)
