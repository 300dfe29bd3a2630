"""What one goal of a batch came to (:class:`GoalResult`, one JSON line of the results file) and the results file
itself: one line per goal, its latest result, rewritten whole (atomically) as each goal ends, so a resumed batch
leaves one line per goal, not one per attempt; read back by ``--resume`` (the last line of a goal wins, for files
written before)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.batch.spec import BatchError

Status = Literal["complete", "blocked", "failed", "cancelled", "paused", "error"]
FINISHED: frozenset[str] = frozenset({"complete", "blocked", "failed", "cancelled"})
"""Statuses ``--resume`` never runs again; ``paused`` (a budget, Ctrl-C) and ``error`` (the goal could not run:
a clone failed, a DeepSeek error) run again."""


class GoalResult(BaseModel):
    """One goal's outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["goal"] = "goal"
    id: str
    objective: str
    workspace: str
    status: Status
    reason: str = ""
    cost_usd: float = 0.0
    """What the goal spent, all its runs counted (a resumed goal continues its count)."""
    requests: int = 0
    cache_hit_ratio: float | None = None
    wall_s: float = 0.0
    """Seconds from the start of this attempt (copying the workspace included) to its end."""
    diff: str = ""
    """What the goal changed in its copy, as ``git diff`` of the seed against the copy (``.reasonix/`` aside)."""
    run_id: str | None = None
    run_dir: str | None = None
    """The run directory in the goal's copy (on the node that ran it: ``node``)."""
    node: str = "local"
    """Where the goal ran: ``local``, or the Ray node id."""
    attempts: int = 1
    """How many times the goal was started in this batch run (more than 1: a node died and the goal was retried)."""
    max_attempts: int = 1

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class ResultsFile:
    """The results JSONL of a batch."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, GoalResult]:
        """The latest result of each goal id (empty when the file does not exist)."""
        if not self.path.exists():
            return {}
        out: dict[str, GoalResult] = {}
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                result = GoalResult.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise BatchError(
                    f"{self.path}:{n} is not a goal result ({exc}); move the file away to start the batch afresh"
                ) from exc
            out[result.id] = result
        return out

    def write(self, results: Iterable[GoalResult]) -> None:
        """The file as exactly these results, a line each: written beside it and renamed over it, so a reader (or a
        batch killed mid-write) sees the old file or the new one, never a part."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        with partial.open("w", encoding="utf-8") as f:
            f.writelines(result.model_dump_json() + "\n" for result in results)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, self.path)

    @staticmethod
    def spent(results: Iterable[GoalResult]) -> float:
        return sum(r.cost_usd for r in results)
