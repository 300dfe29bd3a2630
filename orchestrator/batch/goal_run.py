"""One goal of a batch, run to its end in its own copy of its workspace: :func:`run_one_goal`, the heart of
``reasonix batch`` (on this machine and in a Ray task alike) and of anything else that runs many goals.

The copy lives in ``goal_dir`` (``goal_dir/workspace``, a git clone of the goal's seed, see
:mod:`orchestrator.batch.workspace`), with ``goal_dir/copy.json`` saying which seed commit and run it holds. The goal
runs as ``reasonix goal --unattended --yes`` runs it (the launch path of every goal, :func:`orchestrator.launch.
launch_goal`), its run directory and journals inside the copy: they stay the source of truth, so a paused goal found
in ``goal_dir`` is resumed from its journals, never started again. A shared ledger (the batch's budget) is asked
before every request after the goal's own limits.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import trio
from pydantic import BaseModel, ConfigDict

from orchestrator.batch.progress_event import Progress, ProgressKind
from orchestrator.batch.result import GoalResult, Status
from orchestrator.batch.spec import BatchError, GoalSpec
from orchestrator.batch.workspace import Seed, clone, goal_diff, seed_for
from orchestrator.config.mcp import MCP_FILE
from orchestrator.config.model import PROJECT_FILE, user_config_path
from orchestrator.config.trust import trust_copy, trust_path
from orchestrator.errors import ReasonixError
from orchestrator.events import GoalStateChanged, StepVerified
from orchestrator.goal.runner import AnyEvent, GoalRunner
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.launch import GoalLaunch, launch_goal
from orchestrator.policy.budget import SharedLedger
from orchestrator.review.reviewer import AutoApprove
from orchestrator.ui.goal_lines import state_line
from sessions import UsageReported
from sessions.wire import DeepSeekError

COPY_FILE = "copy.json"


class GoalCopy(BaseModel):
    """``goal_dir/copy.json``: the seed commit of the copy and the run it holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seed_commit: str
    run_id: str


def read_copy(goal_dir: Path) -> tuple[GoalCopy, GoalRecord] | None:
    """The copy in ``goal_dir`` and its run's record, when there is one whose run was created."""
    try:
        copy = GoalCopy.model_validate_json((goal_dir / COPY_FILE).read_text(encoding="utf-8"))
        return copy, RunStore.open(goal_dir / "workspace", copy.run_id).load()
    except (OSError, ValueError, ReasonixError):
        return None


class _Reporter:
    def __init__(self, spec: GoalSpec, node: str, on_progress: Callable[[Progress], None] | None) -> None:
        self.spec, self.node, self.on_progress = spec, node, on_progress
        self.runner: GoalRunner | None = None

    def say(self, kind: ProgressKind, text: str = "") -> None:
        if self.on_progress is None:
            return
        usage = self.runner.budget.usage if self.runner is not None else None
        self.on_progress(
            Progress(
                goal_id=self.spec.id,
                kind=kind,
                text=text,
                cost_usd=usage.usd if usage else 0.0,
                requests=usage.requests if usage else 0,
                node=self.node,
            )
        )

    def event(self, event: AnyEvent) -> None:
        if isinstance(event, GoalStateChanged):
            self.say("state", state_line(event).plain)  # the goal view's words: "» judging", not "replanning"
        elif isinstance(event, StepVerified):
            self.say("step", f"{event.step_id} {'verified' if event.ok else 'failed verification'}")
        elif isinstance(event, UsageReported):
            self.say("cost")


def _trust_copied_config(spec: GoalSpec, copy_dir: Path, env: Mapping[str, str]) -> None:
    """A local workspace's configuration files the user trusted are trusted in the goal's copy when the copy holds
    exactly the trusted bytes (the committed file as trusted): the copy is a new path, and without this every goal of
    a workspace with trusted hooks would be refused. A file the copy holds otherwise stays untrusted."""
    if spec.remote:
        return
    store = trust_path(user_config_path(env))
    for name in (PROJECT_FILE, MCP_FILE):
        if (copy_dir / name).exists():
            trust_copy(store, Path(spec.workspace) / name, copy_dir / name)


async def run_one_goal(
    spec: GoalSpec,
    seed: Seed | None,
    goal_dir: Path,
    *,
    env: Mapping[str, str],
    shared: SharedLedger | None = None,
    base_url: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    node: str = "local",
    attempt: int = 1,
    max_attempts: int = 1,
    transport: httpx.AsyncBaseTransport | None = None,
) -> GoalResult:
    """Run ``spec`` in its copy under ``goal_dir`` (made from ``seed``, packed here when ``None``; or the paused run
    found there, resumed) and return what it came to. Never raises for the goal's own trouble (a clone that fails,
    a configuration problem, a DeepSeek error): that is the result's ``error`` or ``paused`` status with the reason.
    A cancellation (Ctrl-C) pauses the goal, resumable, and propagates."""
    started = trio.current_time()
    reporter = _Reporter(spec, node, on_progress)
    reporter.say("started", f"attempt {attempt}" if attempt > 1 else "")

    def result(status: Status, reason: str, **more: object) -> GoalResult:
        figures: dict[str, object] = {
            "id": spec.id,
            "objective": spec.objective,
            "workspace": spec.workspace,
            "status": status,
            "reason": reason,
            "wall_s": round(trio.current_time() - started, 3),
            "node": node,
            "attempts": attempt,
            "max_attempts": max_attempts,
            **more,
        }
        done = GoalResult.model_validate(figures)
        reporter.say("ended", f"{status}: {reason}" if reason else status)
        return done

    copy_dir = goal_dir / "workspace"
    found = read_copy(goal_dir)
    try:
        if found is None:
            shutil.rmtree(goal_dir, ignore_errors=True)
            commit = await clone(seed or await seed_for(spec), copy_dir, spec.id)
            found_copy = GoalCopy(seed_commit=commit, run_id=spec.id)
            (goal_dir / COPY_FILE).write_text(found_copy.model_dump_json(), encoding="utf-8")
            _trust_copied_config(spec, copy_dir, env)
            resume: str | None = None
        else:
            found_copy, record = found
            if record.state in ("complete", "blocked", "failed", "cancelled"):  # ended before its result was written
                return await _ended(result, copy_dir, found_copy, record, None)
            resume = found_copy.run_id
        launch = GoalLaunch(
            workspace=copy_dir,
            objective="" if resume else spec.objective,
            resume=resume,
            run_id=None if resume else found_copy.run_id,
            preset=spec.preset,
            budget_usd=spec.budget_usd,
            max_requests=spec.max_requests,
            max_minutes=spec.max_minutes,
            base_url=base_url,
            unattended=True,
        )
        launched = launch_goal(
            launch, env=env, reviewer=lambda setup: AutoApprove(), on_event=reporter.event, transport=transport
        )
    except ReasonixError as exc:
        return result("error", str(exc))
    runner = reporter.runner = launched.runner
    if shared is not None:
        runner.budget.share(shared)
    error: DeepSeekError | None = None
    async with runner.client, launched.mcp.open():
        try:
            await runner.run(launch.mode)
        except DeepSeekError as exc:  # the goal paused with it as its reason
            error = exc
        except ReasonixError as exc:
            runner.store.close()
            return result("error", str(exc), run_id=runner.store.run_id, run_dir=str(runner.store.dir))
    ratio = runner.outcome().to_summary("goal").cache_hit_ratio
    runner.store.sync()
    runner.store.close()
    return await _ended(result, copy_dir, found_copy, runner.record, ratio, error)


async def _ended(
    result: Callable[..., GoalResult],
    copy_dir: Path,
    copy: GoalCopy,
    record: GoalRecord,
    ratio: float | None,
    error: DeepSeekError | None = None,
) -> GoalResult:
    state = record.state
    status: Status = state if state in ("complete", "blocked", "failed", "cancelled", "paused") else "paused"
    try:
        diff = await goal_diff(copy_dir, copy.seed_commit)
    except BatchError as exc:
        diff = f"(no diff: {exc})"
    return result(
        status,
        record.reason or (str(error) if error else ""),
        cost_usd=record.usage_usd,
        requests=record.usage_requests,
        cache_hit_ratio=ratio,
        diff=diff,
        run_id=copy.run_id,
        run_dir=str(copy_dir / ".reasonix" / "runs" / copy.run_id),
    )
