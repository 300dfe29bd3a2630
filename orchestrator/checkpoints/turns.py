"""Checkpoints of conversation turns (``reasonix code``, ``reasonix run``): the same shadow store and ledger as goal
steps, one "step" per turn that wrote something.

A turn is recorded as a step of the conversation's run: its id is ``turn-N``, a ``before`` checkpoint (the workspace
as the turn found it, hand edits included) and an ``after`` one (as it left it). The workspace is stored before the
turn (``git add -A`` on the persistent shadow index: only files changed since are hashed again) and again after it;
when the two trees are the same, the turn wrote nothing and nothing is recorded. So ``reasonix undo`` (and ``/undo``)
takes back the last turn that wrote, with the hand-edit check of every undo, and ``reasonix checkpoints`` lists
turns beside goal steps.

Rewinding the code to before turn N (:func:`plan_rewind`) puts back, as they were before the first recorded turn from
N on, exactly the files those turns changed: an :class:`~orchestrator.checkpoints.undo.UndoPlan` like any undo, so the
conflicts (files changed again since the agent) are asked about, never overwritten silently.

What a turn stores depends on what it did (:class:`Turn`, told of each call before it runs by the conversation's gate,
:class:`TurnGate`): a turn that only read stores nothing; a turn whose writes all came through the file tools stores
those paths only, as the turn found them and as it left them, on top of the last stored tree, without walking the
workspace (:mod:`~orchestrator.checkpoints.objects`); a turn that ran a command (``bash``, a server's tool that may
write, any tool that cannot name what it writes) stores the whole workspace before that command and again at the end.
A hand edit made between turns is never taken for the agent's: a file a turn writes through a file tool is stored as
it was just before that write, and the workspace is stored just before a command. A turn during which commands run
outside its calls (hooks, background jobs) stores the whole workspace before it starts, as every turn once did. A
store that takes over a second (the first of a large workspace hashes every file) says so while it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.checkpoints.git import CheckpointError, ShadowRepo, find_git, join_nul
from orchestrator.checkpoints.ledger import Checkpoint, FileChange, Ledger, StepRun, step_runs, undone_steps
from orchestrator.checkpoints.snapshot import Tree, changes_between, store_workspace, take_checkpoint
from orchestrator.checkpoints.turn_calls import Turn
from orchestrator.checkpoints.undo import UNDO_STEP, NothingToUndoError, UndoPlan, new_undo_id

TURN_PREFIX = "turn-"
AFTER_TURN_TIMEOUT_S = 30.0
"""The ``after`` store is taken even while the turn is being cancelled (shielded), within this bound."""
SLOW_STORE_S = 1.0
"""A store of the whole workspace that takes longer than this says what it is doing."""


def turn_step(number: int) -> str:
    return f"{TURN_PREFIX}{number}"


def turn_number(step_id: str) -> int | None:
    """``turn-3`` → 3; None for a goal step."""
    if not step_id.startswith(TURN_PREFIX):
        return None
    tail = step_id[len(TURN_PREFIX) :]
    return int(tail) if tail.isdigit() else None


def _stderr(text: str) -> None:
    print(f"reasonix: {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class TurnRef:
    """Where a turn's checkpoints are: the run they were recorded under (a fork keeps its parent's) and the step."""

    run_id: str
    step_id: str
    seq: int
    """The ``seq`` of its ``before`` checkpoint (a rewound conversation may number a turn again)."""


class TurnCheckpoints:
    """Stores the workspace before and after each turn of one conversation; records the turns that wrote.

    A failure never stops a turn: without git, or when git fails on the store, the notice is given once and the
    conversation goes on without checkpoints."""

    def __init__(self, workspace: Path, *, notify: Callable[[str], None] = _stderr) -> None:
        self.repo = ShadowRepo(workspace)
        self.workspace = workspace.resolve()
        self.notify = notify
        self._off = False
        self._said_skipped: set[str] = set()

    def _usable(self) -> bool:
        if self._off:
            return False
        if find_git() is None:
            self._off = True
            self.notify("git is not installed: turns run without checkpoints, and undo cannot work")
            return False
        return True

    @property
    def off(self) -> bool:
        return self._off

    def failed(self, exc: CheckpointError) -> None:
        self._off = True
        self.notify(f"checkpoints are off for this conversation: {exc}")

    async def store(self, message: str) -> Tree:
        """The whole workspace stored (:func:`store_workspace`); one that takes over :data:`SLOW_STORE_S` says what
        it is doing while it runs, and how long it took."""
        start = trio.current_time()
        said = False

        async def slow() -> None:
            nonlocal said
            await trio.sleep(SLOW_STORE_S)
            said = True
            self.notify(
                "storing the workspace so this turn can be undone (the first store of a workspace hashes every "
                "file; later ones only what changed)..."
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow)
            tree = await store_workspace(self.repo, message)
            nursery.cancel_scope.cancel()
        if said:
            self.notify(f"stored the workspace in {trio.current_time() - start:.1f} s")
        return tree

    def begin(self) -> Turn | None:
        """A turn starts: what it does is told to the :class:`Turn` (None: checkpoints are off)."""
        return Turn(self) if self._usable() else None

    async def before(self) -> Tree | None:
        """The whole workspace as the turn finds it (stored, not yet recorded)."""
        if not self._usable():
            return None
        try:
            return await self.store("before a turn")
        except CheckpointError as exc:
            self.failed(exc)
            return None

    async def after(self, before: Tree | None, *, run_id: str, number: int, note: str) -> TurnRef | None:
        """Store the workspace as the turn left it; record both checkpoints when the turn changed something.
        Shielded and bounded, so a cancelled turn is recorded too."""
        if before is None or self._off:
            return None
        with trio.CancelScope(shield=True), trio.move_on_after(AFTER_TURN_TIMEOUT_S):
            try:
                now = await self.store(f"after turn {number}")
                return await self._record(before, now, run_id=run_id, number=number, note=note)
            except CheckpointError as exc:
                self.failed(exc)
        return None

    async def _record(self, before: Tree, now: Tree, *, run_id: str, number: int, note: str) -> TurnRef | None:
        """Both checkpoints of a turn whose trees differ (None when they do not: the turn wrote nothing)."""
        if now.tree == before.tree:
            return None  # the turn wrote nothing: nothing to take back
        step = turn_step(number)
        first = await take_checkpoint(self.repo, run_id=run_id, step_id=step, kind="before", tree=before, note=note)
        await take_checkpoint(
            self.repo, run_id=run_id, step_id=step, kind="after", tree=now, since=first.tree, note=note
        )
        skipped = [p for p in now.skipped if p not in self._said_skipped]
        if skipped:
            self._said_skipped.update(skipped)
            self.notify(f"not checkpointed (larger than the limit): {', '.join(skipped)}")
        return TurnRef(run_id=run_id, step_id=step, seq=first.seq)

    async def finish(self, turn: Turn | None, *, run_id: str, number: int, note: str) -> TurnRef | None:
        """Record ``turn`` when it changed something (see :class:`Turn`). Shielded and bounded, so a cancelled turn
        is recorded too."""
        if turn is None or self._off:
            return None
        with trio.CancelScope(shield=True), trio.move_on_after(AFTER_TURN_TIMEOUT_S):
            try:
                stored = await turn.stored(number)
                return None if stored is None else await self._record(*stored, run_id=run_id, number=number, note=note)
            except CheckpointError as exc:
                self.failed(exc)
        return None


def live_turns(entries: list[Checkpoint], refs: list[TurnRef]) -> list[StepRun]:
    """The recorded step runs of ``refs`` (oldest first) that no undo has taken back."""
    undone = undone_steps(entries)
    out: list[StepRun] = []
    for ref in refs:
        for sr in step_runs(entries, ref.run_id):
            if sr.before.seq == ref.seq and (ref.run_id, sr.before.seq) not in undone:
                out.append(sr)
    return out


@dataclass(frozen=True)
class RewindPlan(UndoPlan):
    """An undo of several turns where each file goes back to how the first turn that changed it found it (so a hand
    edit made between two turns, in a file only the later turn changed, is kept)."""

    sources: tuple[tuple[str, str], ...] = ()
    """(path, commit to restore it from) for each file in :attr:`restore`."""


async def plan_rewind(repo: ShadowRepo, refs: list[TurnRef]) -> RewindPlan:
    """Undo every turn of ``refs`` (the turns from the chosen one on, oldest first) still live: each file they
    changed goes back to how the first of them that changed it found it. A file whose content now differs from what
    the last turn that changed it left is a conflict (changed since, by hand). Raises :class:`NothingToUndoError`
    when none of them wrote anything (the files are already as they were)."""
    entries = Ledger(repo.workspace).read()
    chosen = live_turns(entries, refs)
    if not chosen:
        raise NothingToUndoError("no file was changed by the agent since that turn: the code is already as it was")
    now = await store_workspace(repo, "before rewinding")
    first_before: dict[str, Checkpoint] = {}
    last_after: dict[str, str] = {}
    agent: dict[str, FileChange] = {}
    cut_off = False
    for sr in chosen:
        after_tree = sr.after.tree if sr.after is not None else now.tree
        cut_off = cut_off or sr.after is None
        for change in await changes_between(repo, sr.before.tree, after_tree):
            first_before.setdefault(change.path, sr.before)
            last_after[change.path] = after_tree
            agent.setdefault(change.path, change)
    differs: set[str] = set()
    for target in {cp.tree for cp in first_before.values()}:
        differs |= {
            c.path
            for c in await changes_between(repo, target, now.tree)
            if c.path in first_before and first_before[c.path].tree == target
        }
    since: set[str] = set()
    for left in set(last_after.values()):
        since |= {c.path for c in await changes_between(repo, left, now.tree) if last_after.get(c.path) == left}
    restore = tuple(agent[p] for p in agent if p in differs)
    conflicts = tuple(c.path for c in restore if c.path in since or (cut_off and last_after[c.path] == now.tree))
    last = chosen[-1]
    return RewindPlan(
        last.before.run_id,
        tuple(chosen),
        chosen[0].before,
        last.after.tree if last.after is not None else now.tree,
        now,
        restore,
        conflicts,
        cut_off,
        sources=tuple((c.path, first_before[c.path].commit) for c in restore),
    )


async def apply_rewind(repo: ShadowRepo, plan: RewindPlan, *, overwrite: bool = False) -> Checkpoint:
    """Restore the plan's files (conflicts only with ``overwrite``), each from its own checkpoint; record it as an
    undo (so it can be taken back itself). Returns its ``after``."""
    undo_id = new_undo_id()
    before = await take_checkpoint(
        repo, run_id=undo_id, step_id=UNDO_STEP, kind="before", tree=plan.now, note="the workspace before rewinding"
    )
    by_source: dict[str, list[str]] = {}
    for path, commit in plan.sources:
        if overwrite or path not in plan.conflicts:
            by_source.setdefault(commit, []).append(path)
    for commit, paths in by_source.items():
        await repo.git(
            "restore",
            f"--source={commit}",
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=join_nul([f":(literal){p}" for p in paths]),
        )
    kept = [p for p in plan.conflicts if not overwrite]
    turns = ", ".join(sr.before.step_id for sr in plan.steps)
    note = f"rewound {turns}" + (f"; kept the hand-edited {', '.join(kept)}" if kept else "")
    return await take_checkpoint(
        repo,
        run_id=undo_id,
        step_id=UNDO_STEP,
        kind="after",
        since=before.tree,
        undoes=tuple(sr.ref for sr in plan.steps),
        note=note,
    )
