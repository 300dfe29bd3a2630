"""The checkpoint cost per conversation turn on a 10,000-file workspace: a turn that writes one file, a turn that
writes none.

    .venv/bin/python bench/turn_checkpoint_bench.py [--files 10000] [--rounds 9] [--nested 0] [--rule both]

What ``reasonix code`` and ``reasonix run`` add to a turn that may write: the workspace stored in the shadow store
before the turn (``git add -A`` on the persistent index, so only changed files are hashed again, and ``write-tree``)
and again after it; when the turn changed something, a commit and two ledger lines; when it changed nothing, no
commit and no line. The first turn of a new workspace hashes every file once (printed too). Wall-clock times; the
machine may be shared, so rerun before comparing.

``--rule``: ``content`` is the store as it is (every gitlink dropped from the index, the files of each nested
repository put into it by name, so git never enters one: :mod:`orchestrator.checkpoints.stage`); ``today`` is the
store before that rule (a plain ``git add -A``, which records a nested repository as a gitlink and asks it for its
status with its own config), kept here only to compare; ``both`` runs each on a fresh copy of the same workspace and
prints the ratio. ``--nested N`` adds N nested repositories of 50 files each (made with ``git init``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checkpoint_bench import git_version, make_repo  # noqa: E402
from orchestrator.checkpoints import snapshot  # noqa: E402
from orchestrator.checkpoints.ledger import Ledger  # noqa: E402
from orchestrator.checkpoints.turns import TurnCheckpoints  # noqa: E402

RULES = ("content", "today")


async def _nothing(*_args: object, **_kwargs: object) -> list[str]:
    return []


def use_rule(rule: str) -> None:
    """``today``: the staging steps of the content rule taken out of the snapshot (this process only)."""
    real = snapshot.__dict__.setdefault(
        "_real_steps", (snapshot.drop_gitlinks, snapshot.index_nested, snapshot.new_gitlinks)
    )
    steps = (_nothing, _nothing, _nothing) if rule == "today" else real
    snapshot.drop_gitlinks, snapshot.index_nested, snapshot.new_gitlinks = steps  # type: ignore[assignment]


def make_nested(ws: Path, count: int) -> None:
    for n in range(count):
        repo = ws / f"vendor{n:02d}"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        for i in range(50):
            (repo / f"file{i:02d}.txt").write_text(f"nested {n} file {i}\n" * 20)
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-qm", "nested"], cwd=repo, check=True)


class Workspace:
    """One workspace of the bench and its turns, under one rule."""

    def __init__(self, root: Path, rule: str, files: int, nested: int) -> None:
        self.rule = rule
        self.ws = root / f"ws-{rule}"
        self.ws.mkdir()
        make_repo(self.ws, files)
        make_nested(self.ws, nested)
        self.turns = TurnCheckpoints(self.ws, notify=lambda text: print(f"notice ({rule}): {text}"))
        self.target = self.ws / "pkg00" / "sub0" / "mod00000.py"
        self.number = 0

    async def turn(self, write: bool) -> float:
        use_rule(self.rule)
        self.number += 1
        start = time.perf_counter()
        before = await self.turns.before()
        spent = time.perf_counter() - start
        if write:  # what the agent does during the turn is not the checkpoint's cost
            self.target.write_text(f"# turn {self.number}\n" + self.target.read_text())
        start = time.perf_counter()
        await self.turns.after(before, run_id="bench", number=self.number, note="bench")
        return spent + time.perf_counter() - start


async def compare(files: int, rounds: int, nested: int, rules: tuple[str, ...]) -> None:
    """Each rule on its own copy of the same workspace, their turns interleaved (a shared machine's load then weighs
    on both alike)."""
    with tempfile.TemporaryDirectory(prefix="reasonix-turn-ckpt-") as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")  # the stores of this run only
        spaces = [Workspace(Path(tmp), rule, files, nested) for rule in rules]
        first = {w.rule: await w.turn(True) for w in spaces}
        one: dict[str, list[float]] = {w.rule: [] for w in spaces}
        none: dict[str, list[float]] = {w.rule: [] for w in spaces}
        for n in range(rounds):
            for w in spaces if n % 2 == 0 else spaces[::-1]:
                one[w.rule].append(await w.turn(True))
        lines = {w.rule: len(Ledger(w.ws).read()) for w in spaces}
        for n in range(rounds):
            for w in spaces if n % 2 == 0 else spaces[::-1]:
                none[w.rule].append(await w.turn(False))
        for w in spaces:
            assert len(Ledger(w.ws).read()) == lines[w.rule], "a turn that wrote nothing must record nothing"
    print(f"workspace: {files} files, {nested} nested repositories (git {git_version()}); turns interleaved")
    figures: dict[str, dict[str, float]] = {}
    for rule in rules:
        figures[rule] = {
            "first": first[rule],
            "one": statistics.median(one[rule]),
            "none": statistics.median(none[rule]),
        }
        print(f"rule {rule!r}")
        print(f"  first turn of the workspace (every file hashed)  {first[rule] * 1000:8.1f} ms")
        print(
            f"  a turn that writes one file (before + after)     {figures[rule]['one'] * 1000:8.1f} ms median, "
            f"{min(one[rule]) * 1000:.1f} ms best of {rounds}"
        )
        print(
            f"  a turn that writes nothing (nothing recorded)    {figures[rule]['none'] * 1000:8.1f} ms median, "
            f"{min(none[rule]) * 1000:.1f} ms best of {rounds}"
        )
    if len(rules) == 2:
        new, old = figures["content"], figures["today"]
        print(
            "content rule / today: "
            + ", ".join(f"{name} {new[name] / old[name]:.2f}x" for name in ("first", "one", "none"))
            + " (first turn, a turn writing one file, a turn writing nothing; medians)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--nested", type=int, default=0)
    parser.add_argument("--rule", choices=(*RULES, "both"), default="both")
    args = parser.parse_args()
    trio.run(compare, args.files, args.rounds, args.nested, RULES if args.rule == "both" else (args.rule,))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
