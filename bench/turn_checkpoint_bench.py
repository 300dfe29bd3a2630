"""The checkpoint cost per conversation turn, the old way (the whole workspace stored before and after every turn)
against the new one (each turn stores what it did), side by side at 10,000 and 50,000 files.

    .venv/bin/python bench/turn_checkpoint_bench.py [--files 10000 50000] [--rounds 5]
    .venv/bin/python bench/turn_checkpoint_bench.py --rule both [--nested 5]   # the nested-repository rule

What a turn's checkpoints cost, its calls aside: ``old`` is ``TurnCheckpoints.before()`` and ``after()`` with the
store as it was (``git ls-files -o -m`` and ``git add -A`` on the persistent shadow index, two walks of the workspace,
before the turn and after it; a copy of that store is kept here, :func:`store_two_walks`); ``new`` is a
:class:`~orchestrator.checkpoints.turn_calls.Turn` told of the turn's calls as the conversation's gate tells it
(``write_file`` names its file; ``bash`` may write anything) and ``finish()``. Printed for each: the first turn of a
new workspace (one file written; every file hashed), a turn writing one file through ``write_file``, a turn whose file
a command wrote, a turn that only read (nothing recorded). The two ways run on copies of the same workspace, their
turns interleaved, so a shared machine's load weighs on both alike; the load average is printed.

``--rule``: the rule for repositories nested in the workspace instead (``content``: the store as it is, every gitlink
dropped and nested repositories' files put in by name, :mod:`orchestrator.checkpoints.stage`; ``today``: a plain ``git
add -A``, kept only to compare; ``both``: each on a copy, with the ratio), turns stored whole. ``--nested N`` adds N
nested repositories of 50 files each.
"""

from __future__ import annotations

import argparse
import os
import resource
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
from orchestrator.checkpoints import snapshot, turns  # noqa: E402
from orchestrator.checkpoints.git import ShadowRepo, join_nul  # noqa: E402
from orchestrator.checkpoints.ledger import Ledger  # noqa: E402
from orchestrator.checkpoints.snapshot import Tree  # noqa: E402
from orchestrator.checkpoints.turns import TurnCheckpoints  # noqa: E402
from sessions.tools import ToolContext  # noqa: E402
from sessions.tools.registry import default_registry  # noqa: E402

RULES = ("content", "today")
WAYS = ("old", "new")
KINDS = {
    "first": "first turn of the workspace (one file written)",
    "file": "a turn writing one file through write_file",
    "command": "a turn whose one file a command wrote",
    "read": "a turn that only read (nothing recorded)",
}


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


async def store_two_walks(repo: ShadowRepo, message: str, *, max_file_bytes: int = snapshot.MAX_FILE_BYTES) -> Tree:
    """The whole-workspace store as it was before issue 49 (kept here only to compare): the listing walks the
    workspace, then ``git add --all .`` walks it again."""
    await repo.ensure()
    await snapshot.drop_gitlinks(repo.git)
    listed = await snapshot._listed(repo)
    if await snapshot.index_nested(repo.git, repo.workspace, max_bytes=max_file_bytes, listed=listed):
        listed = await snapshot._listed(repo)
    big = snapshot._too_big(repo, listed, max_file_bytes)
    specs = ["."] + [f":(exclude,literal){p}" for p in big]
    if big:
        await repo.git("update-index", "-z", "--force-remove", "--stdin", stdin=join_nul(big))
    await repo.git("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=join_nul(specs))
    tree = (await repo.git("write-tree")).decode().strip()
    parent = await repo.head()
    parent_tree = (await repo.git("rev-parse", f"{parent}^{{tree}}")).decode().strip() if parent else None
    if parent is not None and parent_tree == tree:
        return Tree(commit=parent, tree=tree, skipped=tuple(big))
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    commit = (await repo.git(*args)).decode().strip()
    await repo.git("update-ref", snapshot.HEAD_REF, commit)
    return Tree(commit=commit, tree=tree, skipped=tuple(big))


def cpu_seconds() -> float:
    """CPU time of this process and of its children (the git processes) so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def use_way(way: str) -> None:
    """``old``: the turn checkpoints store the workspace the old way (this process only)."""
    setattr(turns, "store_workspace", store_two_walks if way == "old" else snapshot.store_workspace)  # noqa: B010


class WayWorkspace:
    """One workspace of the ways' comparison and its turns, checkpointed the old way or the new."""

    def __init__(self, root: Path, way: str, files: int) -> None:
        self.way = way
        self.ws = root / f"ws-{way}-{files}"
        self.ws.mkdir()
        make_repo(self.ws, files)
        self.turns = TurnCheckpoints(self.ws, notify=lambda text: print(f"  notice ({way}): {text}"))
        self.target = self.ws / "pkg00" / "sub0" / "mod00000.py"
        self.number = 0
        registry = default_registry(use_ripgrep=False)
        self.tools = {name: registry.get(name) for name in ("write_file", "bash", "read_file")}
        self.ctx = ToolContext(root=self.ws)

    async def turn(self, kind: str) -> tuple[float, float]:
        """One turn of ``kind``; the seconds its checkpoints took, wall and CPU (this process and its git
        processes; what the agent does is not counted)."""
        self.number += 1
        rel = str(self.target.relative_to(self.ws))
        content = f"# turn {self.number}\n" + self.target.read_text()
        call = {
            "first": ("write_file", {"path": rel, "content": content}),
            "file": ("write_file", {"path": rel, "content": content}),
            "command": ("bash", {"command": f"echo {self.number} >> {rel}"}),
            "read": ("read_file", {"path": rel}),
        }[kind]
        tool = self.tools[call[0]]
        assert tool is not None
        args = tool.args_model.model_validate(call[1])
        use_way(self.way)
        cpu = cpu_seconds()
        start = time.perf_counter()
        if self.way == "old":
            before = await self.turns.before()
        else:
            turn = self.turns.begin()
            assert turn is not None
            await turn.allow(tool, args, self.ctx)
        spent, cpu_spent = time.perf_counter() - start, cpu_seconds() - cpu
        if kind != "read":
            self.target.write_text(content)
        cpu = cpu_seconds()
        start = time.perf_counter()
        if self.way == "old":
            ref = await self.turns.after(before, run_id="bench", number=self.number, note="bench")
        else:
            ref = await self.turns.finish(turn, run_id="bench", number=self.number, note="bench")
        assert (ref is None) == (kind == "read"), f"{self.way} {kind}: recorded {ref}"
        return spent + time.perf_counter() - start, cpu_spent + cpu_seconds() - cpu


async def compare_ways(sizes: list[int], rounds: int) -> None:
    load = os.getloadavg()
    print(f"git {git_version()}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    for size, files in enumerate(sizes):
        with tempfile.TemporaryDirectory(prefix="reasonix-turn-ckpt-") as tmp:
            os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")  # the stores of this run only
            spaces = [WayWorkspace(Path(tmp), way, files) for way in WAYS]
            times: dict[str, dict[str, list[tuple[float, float]]]] = {w.way: {k: [] for k in KINDS} for w in spaces}
            for w in spaces if size % 2 == 0 else spaces[::-1]:  # the second store of a run waits on the first's
                times[w.way]["first"].append(await w.turn("first"))
            for kind in ("file", "command", "read"):
                for n in range(rounds):
                    for w in spaces if n % 2 == 0 else spaces[::-1]:
                        times[w.way][kind].append(await w.turn(kind))
        print(f"workspace of {files} files, {rounds} turns of each kind, the two ways interleaved (medians):")
        print(f"  {'':48s} {'old wall':>10s} {'new wall':>10s} {'new/old':>8s} {'old CPU':>10s} {'new CPU':>10s}")
        for kind, label in KINDS.items():
            (old, old_cpu), (new, new_cpu) = (
                (statistics.median(t for t, _ in times[way][kind]), statistics.median(c for _, c in times[way][kind]))
                for way in WAYS
            )
            print(
                f"  {label:48s} {old * 1000:7.1f} ms {new * 1000:7.1f} ms {new / old:7.2f}x "
                f"{old_cpu * 1000:7.1f} ms {new_cpu * 1000:7.1f} ms"
            )
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--nested", type=int, default=0)
    parser.add_argument("--rule", choices=(*RULES, "both"), default=None)
    args = parser.parse_args()
    if args.rule is None:
        trio.run(compare_ways, args.files, args.rounds)
    else:
        rules = RULES if args.rule == "both" else (args.rule,)
        trio.run(compare, args.files[0], args.rounds, args.nested, rules)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
