"""What the goal loop calls: a checkpoint around each step, and a reset to it when a step is retried.

    async with runner.checkpoints.step(step.id):      # before: snapshot; after (whatever happened): snapshot
        ...
    note = await runner.checkpoints.reset_for_retry()  # on a retry: the workspace back as it was before the step

A checkpoint that cannot be taken never stops a goal: without git the loop says so once and goes on without
checkpoints; a git failure is reported once and checkpoints stop for that run.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from orchestrator.checkpoints.git import CheckpointError, GitUnavailableError, ShadowRepo, find_git, join_nul
from orchestrator.checkpoints.ledger import Checkpoint
from orchestrator.checkpoints.snapshot import changes_between, store_workspace, take_checkpoint

RESET_NOTE = (
    "The supervisor reset the workspace to how it was before this step (your previous attempt's changes are "
    "undone); start this attempt from there."
)
AFTER_STEP_TIMEOUT_S = 30.0
"""The ``after`` checkpoint is taken even while the step is being cancelled (shielded), within this bound."""

_git_missing_said = False


def _stderr(text: str) -> None:
    print(f"reasonix: {text}", file=sys.stderr, flush=True)


class StepCheckpoints:
    def __init__(
        self,
        workspace: Path,
        run_id: str,
        *,
        retry_from_checkpoint: bool = True,
        notify: Callable[[str], None] = _stderr,
    ) -> None:
        self.repo = ShadowRepo(workspace)
        self.run_id = run_id
        self.retry_from_checkpoint = retry_from_checkpoint
        self._notify = notify
        self.notify = notify
        """How the loop tells the user about what it could not do (stderr by default)."""
        self._broken = False
        self._before: Checkpoint | None = None
        self._attempt = 1
        self._said_skipped: set[str] = set()

    @property
    def enabled(self) -> bool:
        global _git_missing_said
        if self._broken:
            return False
        if find_git() is None:
            if not _git_missing_said:
                _git_missing_said = True
                self._notify(
                    "git is not installed: this goal runs without checkpoints, and `reasonix undo` cannot work"
                )
            return False
        return True

    async def _take(self, **kwargs: object) -> Checkpoint | None:
        if not self.enabled:
            return None
        try:
            cp = await take_checkpoint(self.repo, run_id=self.run_id, **kwargs)  # type: ignore[arg-type]
        except GitUnavailableError:
            return None
        except CheckpointError as exc:
            self._broken = True
            self._notify(f"checkpoints are off for the rest of this run: {exc}")
            return None
        new = [p for p in cp.skipped if p not in self._said_skipped]
        if new:
            self._said_skipped.update(new)
            self._notify(f"not checkpointed (larger than the limit): {', '.join(new)}")
        return cp

    @asynccontextmanager
    async def step(self, step_id: str) -> AsyncIterator[None]:
        """A ``before`` checkpoint, the step, then an ``after`` checkpoint (also when the step failed or was
        cancelled: shielded, and bounded by :data:`AFTER_STEP_TIMEOUT_S`)."""
        self._attempt = 1
        self._before = await self._take(step_id=step_id, kind="before")
        try:
            yield
        finally:
            before, self._before = self._before, None
            if before is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(AFTER_STEP_TIMEOUT_S):
                    await self._take(step_id=step_id, kind="after", since=before.tree, attempt=self._attempt)

    async def reset_for_retry(self) -> str:
        """On a retry of the current step: keep the failed attempt in a ``retry`` checkpoint, then put back every file
        as it was before the step. Returns the note for the model ("" when nothing was reset)."""
        before = self._before
        if not self.retry_from_checkpoint or before is None:
            return ""
        self._attempt += 1
        kept = await self._take(step_id=before.step_id, kind="retry", since=before.tree, attempt=self._attempt - 1)
        if kept is None:
            return ""
        try:
            changed = [c.path for c in await changes_between(self.repo, before.tree, kept.tree)]
            if not changed:
                return ""  # the attempt changed nothing: there is nothing to reset
            await self.repo.git(
                "restore",
                f"--source={before.commit}",
                "--staged",
                "--worktree",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=join_nul([f":(literal){p}" for p in changed]),
            )
            await store_workspace(self.repo, f"{self.run_id} {before.step_id} reset")
        except CheckpointError as exc:
            self._broken = True
            self._notify(f"could not reset the workspace for the retry, the retry goes on from here: {exc}")
            return ""
        return RESET_NOTE
