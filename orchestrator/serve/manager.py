"""The goals the service runs: each an in-process trio task in the service's nursery, a
:class:`~orchestrator.goal.runner.GoalRunner` launched as ``reasonix goal`` launches it
(:func:`orchestrator.launch.launch_goal`, the one launch path: the same review rule, presets and budgets).

One goal per workspace at a time (the run lock: a second is refused with 409), any number of workspaces at once.
Pausing cancels the goal's cancel scope, so it pauses resumable exactly as Ctrl-C pauses ``reasonix goal``; resuming
launches it again with the new limits. A DeepSeek error pauses that goal (the reason is
in its record and its events), never the service. Every run lives in its run directory as before, so a restarted service
lists them (:mod:`orchestrator.runs.history`, as ``reasonix runs`` does) and resumes paused ones on request.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from pydantic import ValidationError

from orchestrator.build import GoalSetup, run_dir
from orchestrator.errors import ReasonixError
from orchestrator.events import TERMINAL_STATES
from orchestrator.exits import leaves
from orchestrator.goal.outcome import resume_command
from orchestrator.goal.runner import AnyEvent, GoalRunner
from orchestrator.goal.store import RunStore, new_run_id
from orchestrator.launch import GoalLaunch, ReviewerFactory, launch_goal
from orchestrator.mcp.hub import McpHub
from orchestrator.review.reviewer import AutoApprove, Reviewer
from orchestrator.serve.cache import RunCache
from orchestrator.serve.errors import InvalidRequestError, RunConflictError, UnknownRunError
from orchestrator.serve.events import EVENTS_FILE, EventLog
from orchestrator.serve.models import Budgets, GoalRequest, ReviewRequest
from orchestrator.serve.review import ApiReviewer
from orchestrator.serve.workspaces import KnownWorkspaces, api_workspace
from plans import PlanError, write_atomic
from sessions.wire import DeepSeekError


@dataclass
class LiveRun:
    """A goal the service is running now."""

    runner: GoalRunner
    log: EventLog
    reviewer: ApiReviewer | None
    mcp: McpHub
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)

    @property
    def workspace(self) -> Path:
        return self.runner.workspace

    @property
    def run_id(self) -> str:
        return self.runner.store.run_id


SERVE_SETTINGS = "serve.json"
"""In a run directory: what the service was asked for beyond the goal's options (``review``)."""


def wants_review(store: RunStore) -> bool:
    """Whether the run's plan is reviewed through the API (``review`` of its ``POST /api/goals``; default true)."""
    try:
        data = json.loads((store.dir / SERVE_SETTINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not (isinstance(data, dict) and data.get("review") is False)


def _limits(request: Budgets) -> dict[str, Any]:
    return {"budget_usd": request.budget_usd, "max_requests": request.max_requests, "max_minutes": request.max_minutes}


class GoalManager:
    """Starts, pauses, resumes and reviews goals; knows the workspaces and their runs."""

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        state_dir: Path,
        workspaces: list[Path] | None = None,
        env: Mapping[str, str],
        base_url: str | None = None,
        on_notice: Callable[[str], None] | None = None,
        workspace_roots: Sequence[Path] = (),
    ) -> None:
        self._nursery = nursery
        self.workspace_roots = tuple(workspace_roots)
        """With ``--workspace-root``: a goal starts only in a directory under one of these."""
        self.on_notice = on_notice
        """Where notices go (no sandbox here, an MCP server that did not start): the service's standard error."""
        self.env = env
        self.base_url = base_url
        self.workspaces = KnownWorkspaces(state_dir, workspaces or [])
        self.live: dict[str, LiveRun] = {}
        self._busy: dict[Path, str] = {}
        """Workspace → the run id of its goal (the run lock)."""
        self._logs: dict[tuple[Path, str], EventLog] = {}
        self.runs = RunCache()
        """Each run's summary and record, read again only when its directory changed."""
        self._found: dict[str, Path] = {}
        self.errors: dict[str, str] = {}
        """Run id → what stopped it from outside (a DeepSeek error), for runs of this service's life."""

    # -------------------------------------------------------------------------------------------- lookup

    def find(self, run_id: str) -> Path:
        """The workspace of ``run_id``; :class:`UnknownRunError` when no known workspace has it."""
        if run_id in self.live:
            return self.live[run_id].workspace
        found = self._found.get(run_id)
        if found is not None and (run_dir(found, run_id) / "goal.json").is_file():
            return found  # opened (its seal checked) before, and still there
        for workspace in self.workspaces.all():
            try:
                RunStore.open(workspace, run_id)
            except ReasonixError:
                continue
            self._found[run_id] = workspace
            return workspace
        raise UnknownRunError(f"no run {run_id!r} in the service's workspaces", "GET /api/runs lists the runs")

    def event_log(self, workspace: Path, run_id: str) -> EventLog:
        key = (workspace, run_id)
        if key not in self._logs:
            self._logs[key] = EventLog(run_dir(workspace, run_id) / EVENTS_FILE)
        return self._logs[key]

    # -------------------------------------------------------------------------------------------- starting

    def _workspace(self, text: str) -> Path:
        return api_workspace(text, self.workspace_roots)

    def _claim(self, workspace: Path) -> None:
        running = self._busy.get(workspace)
        if running is not None:
            raise RunConflictError(
                f"the workspace {workspace} already runs a goal (run {running})",
                f"wait for it, or pause it: POST /api/runs/{running}/pause",
            )

    def _runner(self, launch: GoalLaunch, reviewer: ReviewerFactory, log: EventLog) -> tuple[GoalRunner, McpHub]:
        def on_event(event: AnyEvent) -> None:
            log.append(event.model_dump(mode="json"))

        try:
            launched = launch_goal(launch, env=self.env, reviewer=reviewer, on_event=on_event, on_notice=self.on_notice)
        except (ReasonixError, ValidationError) as exc:
            raise InvalidRequestError(str(exc), "fix the workspace's configuration or the request") from None
        if launched.setup.notice and self.on_notice is not None:
            self.on_notice(f"{launch.workspace}: {launched.setup.notice}")
        return launched.runner, launched.mcp

    def start_goal(self, request: GoalRequest) -> LiveRun:
        """A new goal, started now; :class:`RunConflictError` when its workspace already runs one."""
        workspace = self._workspace(request.workspace)
        self._claim(workspace)
        launch = GoalLaunch(
            workspace=workspace,
            objective=request.objective.strip(),
            run_id=new_run_id(),
            preset=request.preset,
            **_limits(request),
            base_url=self.base_url,
        )
        log = self.event_log(workspace, launch.run_id or "")
        api = ApiReviewer() if request.review else None
        runner, mcp = self._runner(launch, lambda setup: api or AutoApprove(), log)
        self.workspaces.add(workspace)
        write_atomic(runner.store.dir / SERVE_SETTINGS, json.dumps({"review": request.review}) + "\n")
        return self._launch(LiveRun(runner=runner, log=log, reviewer=api, mcp=mcp))

    def resume(self, run_id: str, request: Budgets) -> LiveRun:
        """Continue a paused (or cut-off) run with new limits. A plan no review approved yet is reviewed again (through
        the API, or automatically when the goal was started with ``review: false``), never executed unreviewed."""
        workspace = self.find(run_id)
        if run_id in self.live:
            raise RunConflictError(f"run {run_id} is running", "pause it first, or wait for it to end")
        self._claim(workspace)
        store = RunStore.open(workspace, run_id)
        record = store.load()
        if record.state in TERMINAL_STATES and record.state != "paused":
            raise RunConflictError(
                f"run {run_id} is {record.state}; only a paused or interrupted run can be resumed",
                "start a new goal: POST /api/goals",
            )
        launch = GoalLaunch(workspace=workspace, resume=run_id, **_limits(request), base_url=self.base_url)
        reviewers: list[ApiReviewer] = []

        def reviewer(setup: GoalSetup) -> Reviewer:
            if not wants_review(store):
                return AutoApprove()
            reviewers.append(ApiReviewer())
            return reviewers[0]

        log = self.event_log(workspace, run_id)
        runner, mcp = self._runner(launch, reviewer, log)
        self.errors.pop(run_id, None)
        return self._launch(LiveRun(runner=runner, log=log, reviewer=reviewers[0] if reviewers else None, mcp=mcp))

    def _launch(self, live: LiveRun) -> LiveRun:
        self._busy[live.workspace] = live.run_id
        self.live[live.run_id] = live
        live.log.open()
        self._nursery.start_soon(self._drive, live, name=f"goal {live.run_id}")
        return live

    # -------------------------------------------------------------------------------------------- running

    async def _drive(self, live: LiveRun) -> None:
        runner = live.runner
        error: str | None = None
        try:
            with live.scope:
                async with runner.client, live.mcp.open():
                    await runner.run("goal")
        except* (DeepSeekError, ReasonixError, PlanError) as group:
            error = str(next(leaves(group)))
        except* Exception as group:  # noqa: BLE001 - one goal's bug must not stop the service and its other goals
            error = f"internal error: {next(leaves(group))!r}"
            if runner.record.state not in TERMINAL_STATES:
                runner.finish("paused", f"stopped by an internal error: {error}")
        finally:
            self._ended(live, error)

    def _ended(self, live: LiveRun, error: str | None) -> None:
        """What ``reasonix goal --json`` prints last (the error, or the summary), then the run is no longer live."""
        runner = live.runner
        command = resume_command(live.run_id, workspace=live.workspace, budget=runner.budget)
        try:
            if error is not None:
                self.errors[live.run_id] = error
                live.log.append({"kind": "error", "run_id": live.run_id, "error": error, "resume_command": command})
            elif runner.record.state in TERMINAL_STATES:
                summary = runner.outcome().to_summary("goal")
                if runner.record.state == "paused":
                    summary = summary.model_copy(update={"resume_command": command})
                live.log.append(summary.model_dump(mode="json"))
        finally:
            runner.store.sync()
            runner.store.close()
            live.log.close()
            self.live.pop(live.run_id, None)
            self._busy.pop(live.workspace, None)
            live.done.set()

    # -------------------------------------------------------------------------------------------- actions

    def _live(self, run_id: str) -> LiveRun:
        live = self.live.get(run_id)
        if live is None:
            self.find(run_id)  # 404 for an unknown run
            raise RunConflictError(f"run {run_id} is not running", f"resume it: POST /api/runs/{run_id}/resume")
        return live

    def pause(self, run_id: str) -> LiveRun:
        """Cancel the goal's scope: it pauses, resumable (as Ctrl-C pauses ``reasonix goal``)."""
        live = self._live(run_id)
        live.scope.cancel()
        return live

    def review(self, run_id: str, request: ReviewRequest) -> None:
        live = self._live(run_id)
        if live.reviewer is None:
            raise RunConflictError("the run is not awaiting a review", "its plan was approved automatically")
        live.reviewer.decide(request)

    def pause_all(self) -> list[str]:
        """Pause every running goal (the service is stopping); their ids."""
        for live in self.live.values():
            live.scope.cancel()
        return list(self.live)

    async def wait_idle(self) -> None:
        """Until no goal runs."""
        while self.live:
            await next(iter(self.live.values())).done.wait()


@contextlib.asynccontextmanager
async def open_manager(
    *,
    state_dir: Path,
    workspaces: list[Path] | None = None,
    env: Mapping[str, str],
    base_url: str | None = None,
    on_notice: Callable[[str], None] | None = None,
    workspace_roots: Sequence[Path] = (),
) -> AsyncIterator[GoalManager]:
    """A manager whose goals run in a nursery of their own; leaving it pauses every running goal and waits."""
    async with trio.open_nursery() as nursery:
        manager = GoalManager(
            nursery,
            state_dir=state_dir,
            workspaces=workspaces,
            env=env,
            base_url=base_url,
            on_notice=on_notice,
            workspace_roots=workspace_roots,
        )
        try:
            yield manager
        finally:
            manager.pause_all()
