"""A goal's run directory: ``<workspace>/.reasonix/runs/<run_id>/``.

It holds ``goal.json`` (the goal's state, rewritten atomically at every change), the two session journals
(``planner.jsonl``, ``executor.jsonl``), the plan revisions (``plan.r001.json`` …) and ``events.jsonl`` (goal events).
Everything needed to resume after a crash is here: a verified step is recorded before anything else happens.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.errors import ReasonixError
from orchestrator.events import GoalState
from plans.schema import Plan, StepStatus
from plans.storage import load_latest, save_revision, write_atomic

RUNS_DIR = Path(".reasonix") / "runs"


class RunNotFoundError(ReasonixError):
    """The user named a run that is not there."""


class GoalRecord(BaseModel):
    """The persistent state of one goal (``goal.json``).

    The current plan, each step with its status, result and evidence, is :attr:`plan`: the one home of step state.
    Everything else here is about the run as a whole. A ``goal.json`` written before the plan lived here (with
    per-step ``verified`` / ``statuses`` / ``results`` / ``evidence`` maps) is migrated by :meth:`RunStore.load`.
    """

    model_config = ConfigDict(extra="forbid")
    run_id: str
    objective: str
    state: GoalState = "planning"
    reason: str = ""
    plan: Plan | None = None
    attempts: dict[str, int] = Field(default_factory=dict)
    """Executor turns given to each step since it was last (re)planned."""
    current_step: str | None = None
    """The step being executed when the record was written (a resumed run tells the executor so)."""
    replans: int = 0
    escalations: int = 0
    pro_turns: int = 0
    usage_usd: float = 0.0
    usage_requests: int = 0
    usage_seconds: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    verdict: dict[str, Any] | None = None

    @property
    def plan_revision(self) -> int:
        """The current plan's revision; 0 before the first plan."""
        return self.plan.revision if self.plan is not None else 0

    @property
    def verified(self) -> list[str]:
        """The steps whose verify commands passed (these never run again), in plan order."""
        return [s.id for s in self.plan.steps if s.status is StepStatus.DONE] if self.plan is not None else []


_LEGACY_STEP_MAPS = ("verified", "statuses", "results", "evidence")


def _migrate(data: dict[str, Any], latest: Plan | None) -> dict[str, Any]:
    """A ``goal.json`` with the old per-step maps: the latest plan revision with the maps applied to its steps."""
    legacy = {key: data.pop(key) for key in _LEGACY_STEP_MAPS if key in data}
    data.pop("plan_revision", None)
    if "plan" in data or latest is None:
        return data
    verified = set(legacy.get("verified") or ())
    statuses: dict[str, str] = legacy.get("statuses") or {}
    results: dict[str, str] = legacy.get("results") or {}
    evidence: dict[str, list[str]] = legacy.get("evidence") or {}
    steps = tuple(
        step.model_copy(
            update={
                "status": StepStatus.DONE
                if step.id in verified
                else StepStatus(statuses.get(step.id, StepStatus.PENDING.value)),
                "result": results.get(step.id, step.result),
                "evidence": tuple(evidence.get(step.id, step.evidence)),
            }
        )
        for step in latest.steps
    )
    data["plan"] = latest.model_copy(update={"steps": steps}).model_dump(mode="json")
    return data


def ensure_state_dir(workspace: Path) -> Path:
    """``<workspace>/.reasonix``, created with a ``.gitignore`` of ``*`` so runs never show up in the user's git."""
    state = workspace / ".reasonix"
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Reasonix run journals and plans: local state, not source.\n*\n", encoding="utf-8")
    return state


def new_run_id() -> str:
    """Sortable and unique; never sent to the model (it only names the directory)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


class RunStore:
    def __init__(self, workspace: Path, run_id: str) -> None:
        self.workspace = workspace
        self.run_id = run_id
        self.dir = workspace / RUNS_DIR / run_id
        self._events: Any = None

    @classmethod
    def create(cls, workspace: Path, run_id: str | None = None) -> RunStore:
        store = cls(workspace, run_id or new_run_id())
        ensure_state_dir(workspace)
        store.dir.mkdir(parents=True, exist_ok=True)
        return store

    @classmethod
    def open(cls, workspace: Path, run_id: str) -> RunStore:
        store = cls(workspace, run_id)
        if not (store.dir / "goal.json").is_file():
            known = sorted(p.name for p in (workspace / RUNS_DIR).glob("*") if (p / "goal.json").is_file())
            hint = f" Known runs: {', '.join(known[-5:])}." if known else " There are no runs in this workspace."
            raise RunNotFoundError(f"no run {run_id!r} under {workspace / RUNS_DIR}.{hint}")
        return store

    @property
    def planner_journal(self) -> Path:
        return self.dir / "planner.jsonl"

    @property
    def executor_journal(self) -> Path:
        return self.dir / "executor.jsonl"

    def save(self, record: GoalRecord) -> None:
        write_atomic(self.dir / "goal.json", record.model_dump_json(indent=2) + "\n")

    def load(self) -> GoalRecord:
        path = self.dir / "goal.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and ("plan_revision" in data or "plan" not in data):
                data = _migrate(data, self.latest_plan())
            return GoalRecord.model_validate(data)
        except (OSError, ValueError) as exc:
            raise RunNotFoundError(f"{path} cannot be read: {exc}") from exc

    def save_plan(self, plan: Plan) -> Path:
        return save_revision(self.dir, plan)

    def latest_plan(self) -> Plan | None:
        return load_latest(self.dir)

    def append_event(self, event: dict[str, Any]) -> None:
        if self._events is None:
            self._events = (self.dir / "events.jsonl").open("a", encoding="utf-8")
        self._events.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._events.flush()

    def sync(self) -> None:
        if self._events is not None:
            os.fsync(self._events.fileno())

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None
