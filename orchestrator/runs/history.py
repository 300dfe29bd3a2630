"""The history of runs: what ``reasonix runs`` lists, read from ``.reasonix/runs/*/`` (nothing else is kept).

A goal, plan or exec run has ``goal.json`` (its state and usage), its plan revisions, ``events.jsonl`` and the session
journals; a ``reasonix run`` task has only its ``executor.jsonl``. Requests, cache hits and costs per session come
from the journals' usage events. Which command made a goal run is read from what it left: ``plan`` stops with its
plan approved, ``exec`` never proposes a plan (it starts from one).
"""

from __future__ import annotations

import difflib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.errors import ReasonixError
from orchestrator.goal.store import (
    FORKS_DIR,
    RUNS_DIR,
    TURNS_FILE,
    GoalRecord,
    RunNotFoundError,
    RunStore,
    read_jsonl,
    usage_events,
)
from orchestrator.run_seal import is_sealed
from orchestrator.text.wording import shorten
from plans import Plan, load_latest

Command = Literal["goal", "plan", "exec", "run"]
RESUMABLE_STATES = frozenset({"paused", "planning", "awaiting_review", "executing", "replanning"})
"""Paused, or cut off (killed, interrupted) before it reached a final state."""
PLAN_SAVED = "plan approved and saved"
NOT_JOURNALS = frozenset({"events.jsonl", "serve-events.jsonl", TURNS_FILE})
"""The run directory's logs that are not sessions: the goal's events, the ones ``reasonix serve`` numbers for its API,
and a conversation's turns."""
AGENT_JOURNAL = re.compile(r"(?P<profile>.+)-[0-9a-f]{12}(?:\.\d+)?")
"""A subagent's journal name (``agents/PROFILE-TASKDIGEST[.N].jsonl``; a planner's in ``agents/planner/``)."""


class SessionCost(BaseModel):
    model_config = ConfigDict(frozen=True)
    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def hit_ratio(self) -> float | None:
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else None

    def __add__(self, other: SessionCost) -> SessionCost:
        return SessionCost(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            hit_tokens=self.hit_tokens + other.hit_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class RunSummary(BaseModel):
    model_config = ConfigDict(frozen=True)
    run_id: str
    started: str
    """UTC, ISO 8601 (from the run id, or the directory's time)."""
    command: Command
    objective: str
    status: str
    steps_done: int | None
    steps_total: int | None
    requests: int
    hit_ratio: float | None
    cost_usd: float
    resumable: bool
    sessions: dict[str, SessionCost]


PLANNED = "planned"
"""The status of a ``reasonix plan`` run whose plan was approved and saved (``reasonix exec`` runs it)."""


def runs_root(workspace: Path) -> Path:
    return workspace / RUNS_DIR


def _started(run_dir: Path) -> datetime:
    try:
        return datetime.strptime(run_dir.name[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return datetime.fromtimestamp(run_dir.stat().st_mtime, UTC)


def _journal_cost(journal: Path) -> SessionCost:
    total = SessionCost()
    for event in usage_events(journal):
        usage = event.get("usage") or {}
        total = total + SessionCost(
            requests=1,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            hit_tokens=int(usage.get("prompt_cache_hit_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            cost_usd=float(event.get("cost_usd", 0.0)),
        )
    return total


def session_costs(run_dir: Path) -> dict[str, SessionCost]:
    """Per session journal: requests, tokens and dollars, from its usage events. The executor's forks (parallel
    branches, ``forks/*.jsonl``) count as the executor."""
    out = {j.stem: _journal_cost(j) for j in sorted(run_dir.glob("*.jsonl")) if j.name not in NOT_JOURNALS}
    forks = [_journal_cost(j) for j in sorted((run_dir / FORKS_DIR).glob("*.jsonl"))]
    if any(f.requests for f in forks):  # the executor's forks (parallel branches) count as the executor
        out["executor"] = sum(forks, out.get("executor", SessionCost()))
    for agents in (run_dir / "agents", run_dir / FORKS_DIR / "agents"):  # a parallel step's subagents: the forks'
        for name, cost in _agent_costs(agents).items():
            out[name] = out.get(name, SessionCost()) + cost
    return out


def _agent_costs(agents: Path) -> dict[str, SessionCost]:
    """The subagents' journals, summed per profile (``agent:PROFILE``, ``agent:PROFILE@planner``): what the ``task``
    tool spent counts in the run's cost."""
    out: dict[str, SessionCost] = {}
    if agents.is_symlink() or not agents.is_dir():  # a repository's run may link it anywhere: never walked
        return out
    for journal in sorted([*agents.glob("*.jsonl"), *agents.glob("*/*.jsonl")]):  # the parent's, a planner's
        named = AGENT_JOURNAL.fullmatch(journal.stem)
        if named is None:
            continue
        parent = "" if journal.parent == agents else f"@{journal.parent.name}"
        name = f"agent:{named['profile']}{parent}"
        out[name] = out.get(name, SessionCost()) + _journal_cost(journal)
    return out


_TAIL_BLOCKS = re.compile(r"\A(?:<([a-z][a-z0-9-]*)>\n.*?\n</\1>\n\n)+", re.DOTALL)


def _task_objective(journal: Path) -> str:
    """The task of a ``reasonix run`` (or a ``reasonix code`` conversation): its first user message, without the tail
    blocks in front of it (a conversation's ``<mode>``)."""
    for record in read_jsonl(journal, b'"msg"'):
        try:
            message = json.loads(record.get("raw", ""))
        except (TypeError, json.JSONDecodeError):
            continue
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return _TAIL_BLOCKS.sub("", str(message["content"]))
    return ""


def _task_status(journal: Path) -> str:
    finished = [r["event"] for r in read_jsonl(journal, b'"turn_finished"') if isinstance(r.get("event"), dict)]
    return str(finished[-1].get("status", "done")) if finished else "interrupted"


def _command(run_dir: Path, record: GoalRecord) -> Command:
    if record.reason.startswith(PLAN_SAVED):
        return "plan"
    proposed = read_jsonl(run_dir / "events.jsonl", b'"plan_proposed"')
    return "exec" if not proposed and record.plan_revision > 0 else "goal"


def summarize(run_dir: Path) -> RunSummary | None:
    """One run directory, summarized; ``None`` for a directory that is not a run, or not this user's (no valid seal:
    a repository may ship one, :mod:`orchestrator.run_seal`)."""
    if not is_sealed(run_dir.parent.parent.parent, run_dir.name):
        return None
    sessions = session_costs(run_dir)
    prompt = sum(s.prompt_tokens for s in sessions.values())
    hit = sum(s.hit_tokens for s in sessions.values())
    common: dict[str, Any] = dict(
        run_id=run_dir.name,
        started=_started(run_dir).isoformat(timespec="seconds"),
        hit_ratio=hit / prompt if prompt else None,
        sessions=sessions,
    )
    goal = run_dir / "goal.json"
    if goal.is_file():
        try:
            record = GoalRecord.model_validate_json(goal.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return None
        plan = load_latest(run_dir)
        command = _command(run_dir, record)
        return RunSummary(
            **common,
            command=command,
            objective=record.objective,
            # a `reasonix plan` ends paused on purpose, its plan approved and saved: not a goal waiting to resume
            status=PLANNED if command == "plan" and record.state == "paused" else record.state,
            steps_done=len(set(record.verified)) if plan is not None else None,
            steps_total=len(plan.steps) if plan is not None else None,
            requests=record.usage_requests or sum(s.requests for s in sessions.values()),
            cost_usd=record.usage_usd or sum(s.cost_usd for s in sessions.values()),
            resumable=command != "plan" and record.state in RESUMABLE_STATES,
        )
    journal = run_dir / "executor.jsonl"
    if not journal.is_file():
        return None
    return RunSummary(
        **common,
        command="run",
        objective=_task_objective(journal),
        status=_task_status(journal),
        steps_done=None,
        steps_total=None,
        requests=sum(s.requests for s in sessions.values()),
        cost_usd=sum(s.cost_usd for s in sessions.values()),
        resumable=False,
    )


def list_runs(workspace: Path) -> list[RunSummary]:
    """Every run of the workspace, newest first."""
    root = runs_root(workspace)
    if not root.is_dir():
        return []
    runs = [s for d in root.iterdir() if d.is_dir() and (s := summarize(d)) is not None]
    return sorted(runs, key=lambda r: (r.started, r.run_id), reverse=True)


def latest_resumable(workspace: Path) -> RunSummary | None:
    return next((r for r in list_runs(workspace) if r.resumable), None)


def resolve_run(workspace: Path, run_id: str, runs: list[RunSummary] | None = None) -> RunSummary:
    """The run named by ``run_id`` (or by a prefix of one id). :class:`RunNotFoundError` lists the nearest ids with
    their objectives."""
    runs = list_runs(workspace) if runs is None else runs
    by_id = {r.run_id: r for r in runs}
    if run_id in by_id:
        return by_id[run_id]
    prefixed = [r for r in runs if r.run_id.startswith(run_id)] if run_id else []
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        lines = [f"{run_id!r} is ambiguous: {len(prefixed)} runs start with it; say more of the id:"]
        lines += [f"  {r.run_id}  {r.status:<9} {shorten(r.objective, 50)}" for r in prefixed[:10]]
        if len(prefixed) > 10:
            lines.append(f"  … and {len(prefixed) - 10} more (`reasonix runs` lists them all)")
        raise RunNotFoundError("\n".join(lines))
    raise RunNotFoundError(unknown_run_message(workspace, run_id, runs))


def unknown_run_message(workspace: Path, run_id: str, runs: list[RunSummary]) -> str:
    if not runs:
        return f"no run {run_id!r}: there are no runs in {runs_root(workspace)} yet"
    ids = [r.run_id for r in runs]
    near = difflib.get_close_matches(run_id, ids, n=5, cutoff=0.5) or [i for i in ids if i.startswith(run_id)][:5]
    by_id = {r.run_id: r for r in runs}
    shown = [by_id[i] for i in near] or runs[:5]
    lead = "the nearest" if near else "the latest"
    lines = [f"no run {run_id!r} in {runs_root(workspace)}; {lead}:"]
    lines += [f"  {r.run_id}  {r.status:<9} {shorten(r.objective, 50)}" for r in shown]
    lines.append("`reasonix runs` lists them all")
    return "\n".join(lines)


def run_plan(workspace: Path, run_id: str) -> Plan | None:
    """The run's current plan, each step with the state the run recorded for it (``goal.json`` holds it)."""
    run_dir = runs_root(workspace) / run_id
    try:
        record = RunStore.open(workspace, run_id).load()
    except (OSError, ValueError, ReasonixError):
        return load_latest(run_dir)
    return record.plan if record.plan is not None else load_latest(run_dir)


def run_events(workspace: Path, run_id: str) -> list[dict[str, Any]]:
    return read_jsonl(runs_root(workspace) / run_id / "events.jsonl")
