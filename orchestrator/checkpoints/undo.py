"""Taking back steps: ``reasonix undo`` plans which files go back to which checkpoint, finds hand edits, restores.

Undoing the steps from S onwards of a run puts back, as they were before S, exactly the files those steps changed.
Three states decide it: the *target* (the checkpoint before S), the *agent's* state (the checkpoint after the last
step taken back) and the workspace *now*. A file the agent changed whose content now differs from what the agent left
was changed since (by hand, or by a later run): it is a conflict, never overwritten silently. Files the agent did not
touch are left alone. The workspace as it is now is stored first, so an undo can itself be undone
(``reasonix undo --run undo-…``), and an overwritten hand edit is still in that checkpoint.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from orchestrator.checkpoints.git import CheckpointError, ShadowRepo, join_nul
from orchestrator.checkpoints.ledger import (
    UNDO_PREFIX,
    Checkpoint,
    FileChange,
    Ledger,
    StepRun,
    run_ids,
    step_runs,
    undone_steps,
)
from orchestrator.checkpoints.snapshot import Tree, changes_between, store_workspace, take_checkpoint

UNDO_STEP = "undo"


class NothingToUndoError(CheckpointError):
    """The user asked to undo something there is no checkpoint for (the message lists what there is)."""


@dataclass(frozen=True)
class UndoPlan:
    run_id: str
    steps: tuple[StepRun, ...]
    """The step runs taken back, oldest first."""
    target: Checkpoint
    agent_tree: str
    now: Tree
    restore: tuple[FileChange, ...]
    """Each file that goes back, with what the agent had done to it (A: created, so it is removed)."""
    conflicts: tuple[str, ...]
    """Files the agent changed and that were changed again since."""
    cut_off: bool = False
    """The last step was cut off before its ``after`` checkpoint: which changes were the agent's is unknown, so every
    change since the step's checkpoint is a conflict (asked about, never overwritten silently)."""


def _pick_run(entries: list[Checkpoint], undone: dict[tuple[str, int], str]) -> str:
    runs = [r for r in run_ids(entries) if not r.startswith(UNDO_PREFIX)]
    if not runs:
        raise NothingToUndoError(
            "there are no checkpoints in this workspace yet: a turn that writes takes one, a goal one before each step"
        )
    latest = max(runs, key=lambda r: max(cp.seq for cp in entries if cp.run_id == r))
    if all((latest, sr.before.seq) in undone for sr in step_runs(entries, latest)):
        older = [r for r in runs if r != latest and any((r, s.before.seq) not in undone for s in step_runs(entries, r))]
        hint = f"; take back the run before it with: reasonix undo --run {older[-1]}" if older else ""
        raise NothingToUndoError(f"every step of the latest run {latest} is already undone{hint}")
    return latest


def _chosen(entries: list[Checkpoint], run_id: str, step_id: str | None) -> tuple[StepRun, ...]:
    undone = undone_steps(entries)
    runs = step_runs(entries, run_id)
    if not runs:
        raise NothingToUndoError(f"run {run_id} has no checkpoints (see them all with: reasonix checkpoints)")
    live = [sr for sr in runs if (run_id, sr.before.seq) not in undone]
    if not live:
        raise NothingToUndoError(f"every step of run {run_id} is already undone")
    if step_id is None:
        return (live[-1],)
    for i, sr in enumerate(live):
        if sr.before.step_id == step_id:
            return tuple(live[i:])
    names = ", ".join(dict.fromkeys(sr.before.step_id for sr in live))
    raise NothingToUndoError(f"run {run_id} has no step {step_id} left to undo; its steps: {names}")


def _agent_tree(entries: list[Checkpoint], last: StepRun) -> str | None:
    """The workspace as the last step left it; ``None`` when the step was cut off (killed) before it ended."""
    if last.after is not None:
        return last.after.tree
    later = [cp for cp in entries if cp.run_id == last.before.run_id and cp.seq > last.before.seq]
    return later[-1].tree if later else None


async def plan_undo(repo: ShadowRepo, *, run_id: str | None = None, step_id: str | None = None) -> UndoPlan:
    """What undoing would do; stores the workspace as it is now (in the shadow store, not yet in the ledger)."""
    entries = Ledger(repo.workspace).read()
    run_id = run_id or _pick_run(entries, undone_steps(entries))
    chosen = _chosen(entries, run_id, step_id)
    target = chosen[0].before
    agent_tree = _agent_tree(entries, chosen[-1])
    now = await store_workspace(repo, f"before undoing {run_id}")
    cut_off = agent_tree is None
    if agent_tree is None:  # what the step left is unknown: every change since its checkpoint is asked about
        agent_tree = now.tree
    by_agent = await changes_between(repo, target.tree, agent_tree)
    since = {c.path for c in await changes_between(repo, agent_tree, now.tree)}
    differs = {c.path for c in await changes_between(repo, target.tree, now.tree)}
    restore = tuple(c for c in by_agent if c.path in differs)
    conflicts = tuple(c.path for c in restore if cut_off or c.path in since)
    return UndoPlan(run_id, chosen, target, agent_tree, now, restore, conflicts, cut_off)


def new_undo_id() -> str:
    return UNDO_PREFIX + time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


async def apply_undo(repo: ShadowRepo, plan: UndoPlan, *, overwrite: bool = False) -> Checkpoint:
    """Restore the plan's files (conflicts only with ``overwrite``); record the undo. Returns its ``after``."""
    undo_id = new_undo_id()
    before = await take_checkpoint(
        repo, run_id=undo_id, step_id=UNDO_STEP, kind="before", tree=plan.now, note="the workspace before undoing"
    )
    paths = [c.path for c in plan.restore if overwrite or c.path not in plan.conflicts]
    if paths:
        await repo.git(
            "restore",
            f"--source={plan.target.commit}",
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=join_nul([f":(literal){p}" for p in paths]),
        )
    kept = [p for p in plan.conflicts if not overwrite]
    what = ", ".join(dict.fromkeys(sr.before.step_id for sr in plan.steps))
    note = f"took back {what} of {plan.run_id}" + (f"; kept the hand-edited {', '.join(kept)}" if kept else "")
    return await take_checkpoint(
        repo,
        run_id=undo_id,
        step_id=UNDO_STEP,
        kind="after",
        since=before.tree,
        undoes=tuple(sr.ref for sr in plan.steps),
        note=note,
    )
