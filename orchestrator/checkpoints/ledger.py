"""What each checkpoint records: ``log.jsonl`` beside the shadow store (outside the workspace, see
:mod:`~orchestrator.checkpoints.git`), one line per checkpoint, appended.

A step of a goal has a ``before`` checkpoint (taken before the executor touches anything) and an ``after`` one (the
workspace as the step left it, verification included). A retry reset adds a ``retry`` one (the failed attempt's
files, kept). An undo is a run of its own (``undo-…``) with one step, ``undo``: its ``before`` is the workspace just
before restoring (hand edits included), its ``after`` the restored workspace, so an undo can itself be undone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.checkpoints.git import store_for

LEDGER = "log.jsonl"
UNDO_PREFIX = "undo-"
MAX_CHANGES = 200
"""Changes listed per checkpoint (the total is always recorded)."""

Kind = Literal["before", "after", "retry"]


class FileChange(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    status: str
    """``git diff --name-status`` letters: A added, M modified, D deleted, T type changed (file ↔ symlink)."""
    path: str


class StepRunRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: str
    seq: int
    """The ``seq`` of the step's ``before`` checkpoint: one run of one step."""
    step_id: str


class Checkpoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    seq: int
    run_id: str
    step_id: str
    kind: Kind
    commit: str
    tree: str
    at: str
    """UTC, ISO 8601."""
    attempt: int = 1
    changes: tuple[FileChange, ...] = ()
    changes_total: int = 0
    skipped: tuple[str, ...] = ()
    """Files left out for their size."""
    undoes: tuple[StepRunRef, ...] = ()
    """For an undo: the step runs it took back."""
    note: str = ""

    @property
    def is_undo(self) -> bool:
        return self.run_id.startswith(UNDO_PREFIX)


class Ledger:
    def __init__(self, workspace: Path) -> None:
        self.path = store_for(workspace) / LEDGER

    def read(self) -> list[Checkpoint]:
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(Checkpoint.model_validate_json(line))
            except ValidationError:
                continue  # a torn last line (killed mid-write) or a line from a newer reasonix
        return out

    def next_seq(self) -> int:
        entries = self.read()
        return entries[-1].seq + 1 if entries else 1

    def append(self, checkpoint: Checkpoint) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(checkpoint.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n")


@dataclass(frozen=True)
class StepRun:
    """One run of one step: its ``before`` checkpoint and, once it ended, its ``after`` one."""

    before: Checkpoint
    after: Checkpoint | None
    retries: tuple[Checkpoint, ...] = ()

    @property
    def ref(self) -> StepRunRef:
        return StepRunRef(run_id=self.before.run_id, seq=self.before.seq, step_id=self.before.step_id)

    @property
    def changes(self) -> tuple[FileChange, ...]:
        return self.after.changes if self.after is not None else ()


def step_runs(entries: Iterable[Checkpoint], run_id: str) -> list[StepRun]:
    runs: list[StepRun] = []
    for cp in entries:
        if cp.run_id != run_id:
            continue
        if cp.kind == "before":
            runs.append(StepRun(before=cp, after=None))
        elif runs and runs[-1].before.step_id == cp.step_id:
            last = runs[-1]
            if cp.kind == "after":
                runs[-1] = StepRun(before=last.before, after=cp, retries=last.retries)
            else:
                runs[-1] = StepRun(before=last.before, after=last.after, retries=(*last.retries, cp))
    return runs


def run_ids(entries: Iterable[Checkpoint]) -> list[str]:
    """Runs with checkpoints, oldest first (by their first checkpoint)."""
    seen: dict[str, None] = {}
    for cp in entries:
        seen.setdefault(cp.run_id, None)
    return list(seen)


def undone_steps(entries: Iterable[Checkpoint]) -> dict[tuple[str, int], str]:
    """(run id, before seq) of every step run taken back and not restored since -> the undo that took it back."""
    undone: dict[tuple[str, int], str] = {}
    for cp in entries:
        if cp.kind != "after" or not cp.undoes:
            continue
        for ref in cp.undoes:
            undone[(ref.run_id, ref.seq)] = cp.run_id
            if ref.run_id.startswith(UNDO_PREFIX):  # an undo taken back: what it had taken back is back
                for key in [k for k, by in undone.items() if by == ref.run_id]:
                    del undone[key]
    return undone
