"""What the API says about runs, read from their run directories as ``reasonix runs`` reads them
(:mod:`orchestrator.runs.history`; read again only when the directory changed, :mod:`orchestrator.serve.cache`),
plus what only the service knows (live, awaiting review, an error), and undo through the checkpoint machinery
(:mod:`orchestrator.checkpoints.undo`), non-interactive."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.build import run_dir
from orchestrator.goal.outcome import resume_command
from orchestrator.goal.store import GoalRecord
from orchestrator.runs.history import RunSummary, runs_root
from orchestrator.serve.cache import RunFacts
from orchestrator.serve.errors import RunConflictError, UnknownRunError
from orchestrator.serve.manager import GoalManager
from orchestrator.serve.models import RunDetail, RunInfo, UndoResult


def _updated(path: Path) -> str:
    target = path / "goal.json" if (path / "goal.json").is_file() else path
    return datetime.fromtimestamp(target.stat().st_mtime, UTC).isoformat(timespec="seconds")


def _facts(manager: GoalManager, workspace: Path) -> list[RunFacts]:
    root = runs_root(workspace)
    if not root.is_dir():
        return []
    return [manager.runs.facts(workspace, d) for d in root.iterdir() if d.is_dir()]


def run_info(manager: GoalManager, workspace: Path, summary: RunSummary, record: GoalRecord | None) -> RunInfo:
    return RunInfo(
        run_id=summary.run_id,
        workspace=str(workspace),
        objective=summary.objective,
        state=summary.status,
        reason=record.reason if record is not None else "",
        created_at=summary.started,
        updated_at=_updated(run_dir(workspace, summary.run_id)),
        cost_usd=round(summary.cost_usd, 6),
        requests=summary.requests,
        cache_hit_ratio=round(summary.hit_ratio, 6) if summary.hit_ratio is not None else None,
        duration_s=round(record.usage_seconds, 3) if record is not None else 0.0,
        steps_total=summary.steps_total,
        steps_done=summary.steps_done,
        live=summary.run_id in manager.live,
        error=manager.errors.get(summary.run_id),
    )


def all_runs(manager: GoalManager) -> list[RunInfo]:
    """Every run of every known workspace, newest first."""
    infos = [
        run_info(manager, ws, f.summary, f.record)
        for ws in manager.workspaces.all()
        for f in _facts(manager, ws)
        if f.summary is not None
    ]
    return sorted(infos, key=lambda r: (r.created_at, r.run_id), reverse=True)


def _last_summary(manager: GoalManager, workspace: Path, run_id: str) -> dict[str, Any] | None:
    return manager.event_log(workspace, run_id).last_summary()


def run_detail(manager: GoalManager, run_id: str) -> RunDetail:
    workspace = manager.find(run_id)
    facts = manager.runs.facts(workspace, run_dir(workspace, run_id))
    summary, record = facts.summary, facts.record
    if summary is None:
        raise UnknownRunError(f"run {run_id} cannot be read", "GET /api/runs lists the runs")
    info = run_info(manager, workspace, summary, record)
    live = manager.live.get(run_id)
    plan = record.plan.model_dump(mode="json") if record is not None and record.plan is not None else None
    return RunDetail(
        **info.model_dump(),
        plan=plan,
        summary=None if live is not None else _last_summary(manager, workspace, run_id),
        awaiting_review=live is not None and live.reviewer is not None and live.reviewer.awaiting,
        resume_hint=resume_command(run_id, workspace=workspace, base_url=manager.base_url or None)
        if summary.resumable and live is None
        else "",
    )


async def undo_run(manager: GoalManager, run_id: str, step: str | None) -> UndoResult:
    """Take back the run's steps from ``step`` on (default: its last), keeping files changed since by hand; refused
    while the run (or any goal of its workspace) is running."""
    from orchestrator.checkpoints.git import CheckpointError, ShadowRepo, find_git
    from orchestrator.checkpoints.undo import apply_undo, plan_undo

    workspace = manager.find(run_id)
    if run_id in manager.live or any(live.workspace == workspace for live in manager.live.values()):
        raise RunConflictError(
            f"a goal is running in {workspace}; undo would race with it",
            f"pause it first: POST /api/runs/{run_id}/pause",
        )
    if find_git() is None:
        raise RunConflictError("git is not installed (or not on PATH)", "install git: checkpoints and undo need it")
    repo = ShadowRepo(workspace)
    try:
        plan = await plan_undo(repo, run_id=run_id, step_id=step)
        if not plan.restore:
            return UndoResult(restored=[], kept=[])
        await apply_undo(repo, plan, overwrite=False)
    except CheckpointError as exc:
        raise RunConflictError(str(exc), "GET /api/runs/{id} shows the run's steps") from None
    kept = list(plan.conflicts)
    return UndoResult(restored=[c.path for c in plan.restore if c.path not in kept], kept=kept)
