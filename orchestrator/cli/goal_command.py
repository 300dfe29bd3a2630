"""What ``reasonix goal``, ``reasonix plan`` and ``reasonix exec`` share: their options, building the runner, Ctrl-C,
showing the outcome and the exit status.

Exit status: the table in ``orchestrator/exits.py`` (0 complete, or for ``plan`` approved and saved; 1 failed,
blocked, an invalid plan file, or stopped by a DeepSeek error, with the resume command; 2 usage or configuration; 3
paused, with the resume command; 4 cancelled at review; 130 interrupted by Ctrl-C, paused and resumable).

This module is imported inside the commands' ``run`` (it pulls in trio, rich and the orchestrator).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from orchestrator.build import GoalSetup, check_workspace
from orchestrator.cli.options import read_text_argument
from orchestrator.errors import ReasonixError, ReviewUnavailableError, UsageError
from orchestrator.events import TERMINAL_STATES, ReviewDecided
from orchestrator.exits import ExitCode, leaves
from orchestrator.goal.context import GoalMode
from orchestrator.goal.outcome import resume_command
from orchestrator.goal.runner import AnyEvent, GoalOutcome, GoalRunner
from orchestrator.launch import GoalLaunch, LaunchedGoal, ReviewerFactory, check_limits, launch_goal, plan_estimate
from orchestrator.mcp.hub import McpHub
from orchestrator.policy.verify import unconfined_reason
from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT
from orchestrator.replay.recorder import Recorder, recording_line, settings_from_goal_options
from orchestrator.review.reviewer import Reviewer, make_reviewer
from orchestrator.signals import hard_exit, run_interruptible, watch_interrupts
from orchestrator.ui.approval import terminal_asker
from orchestrator.ui.goal_view import GoalTerminalUI, summary_text
from orchestrator.ui.stream import JsonLinesRenderer
from orchestrator.unattended.loop import UnattendedRun
from plans import Plan, PlanError, PlanFileError, load_plan_file, revision_path
from sessions.wire import DeepSeekError

__all__ = ["GoalCommand", "hard_exit", "read_plan_file", "run_command", "watch_interrupts"]


# ------------------------------------------------------------------------------------------------ plan files


def read_plan_file(path: Path) -> Plan:
    """An approved plan from its file; :class:`plans.errors.PlanFileError` names every problem (schema and graph)."""
    return load_plan_file(path, check_graph=True).plan


# ------------------------------------------------------------------------------------------------ the run


@dataclass
class GoalCommand:
    """One invocation of ``goal`` / ``plan`` / ``exec``."""

    args: argparse.Namespace
    mode: GoalMode
    prog: str
    stdout: Console = field(default_factory=lambda: Console(highlight=False, soft_wrap=True))
    stderr: Console = field(default_factory=lambda: Console(stderr=True, highlight=False, soft_wrap=True))
    stdin_isatty: bool = field(default_factory=lambda: bool(sys.stdin and sys.stdin.isatty()))
    last_review: str | None = None
    recorder: Recorder | None = None
    objective: str = ""
    mcp: McpHub | None = None
    """The MCP servers, opened around the run (their tools join both sessions)."""
    launched: LaunchedGoal | None = None
    unattended: UnattendedRun | None = None
    """An unattended run: its :attr:`~UnattendedRun.runner` is the current one (a new one after each wait)."""

    def fail(self, message: str, code: int) -> int:
        self.stderr.print(Text(f"reasonix {self.prog}: {message}", style="red"))
        return code

    # -------------------------------------------------------------------------------------------- building

    def launch(self) -> GoalLaunch:
        """What the command line asks for, checked."""
        args = self.args
        check_limits(args.budget_usd, args.max_requests, args.max_minutes)  # the first thing a user gets wrong
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        resume: str | None = getattr(args, "resume", None)
        plan: Plan | None = None
        objective = ""
        if self.mode == "exec":
            plan = read_plan_file(args.plan_file)
        elif resume is None:
            objective = (read_text_argument(args, "objective") or "").strip()
            if not objective:
                raise UsageError(f'the objective is empty; say what to achieve, e.g. reasonix {self.prog} "add a test"')
        elif args.objective or args.objective_file:
            raise UsageError("give an objective or --resume RUN_ID, not both")
        else:
            resume = self._resolve_resume(workspace, resume)
        return GoalLaunch(
            workspace=workspace,
            mode=self.mode,
            objective=objective,
            plan=plan,
            resume=resume,
            preset=args.preset,
            budget_usd=args.budget_usd,
            max_requests=args.max_requests,
            max_minutes=args.max_minutes,
            base_url=args.base_url,
            sandbox=getattr(args, "sandbox", None),
            permissions=getattr(args, "permissions", None),
            allow_unconfined_verify=bool(getattr(args, "allow_unconfined_verify", False)),
            unattended=getattr(args, "unattended", None),
            max_runtime_s=getattr(args, "max_runtime", None),
            notify_cmd=getattr(args, "notify_cmd", None),
        )

    def _reviewer(self, launch: GoalLaunch) -> ReviewerFactory:
        """The terminal's reviewer (or ``--yes``), made only when the run needs a review."""
        yes = bool(getattr(self.args, "yes", False)) or bool(getattr(self.args, "unattended", False))

        def make(setup: GoalSetup) -> Reviewer:
            if not yes and not self.stdin_isatty and launch.resume is not None:
                raise _nobody_to_review(launch, Path(self.args.workspace))
            # Without --json the goal display has already drawn the plan (and any diff) on the same console.
            console = self.stderr if self.args.json else self.stdout
            made = make_reviewer(
                console,
                yes=yes,
                stdin_isatty=self.stdin_isatty,
                show_plan=bool(self.args.json),
                estimate=plan_estimate(setup),
                unconfined=unconfined_reason(setup.sandbox),
            )
            return self.recorder.reviewer(made) if self.recorder is not None else made

        return make

    def build(self, on_event: Callable[[AnyEvent], None]) -> GoalRunner:
        launch = self.launch()
        record: Path | None = getattr(self.args, "record", None)
        if record is not None and launch.resume is not None:
            raise UsageError("--record starts a new recording; it cannot continue a resumed run")
        if record is not None:
            self.recorder = Recorder.start(launch.workspace)
            self.objective = launch.objective
        launched = launch_goal(
            launch,
            env=os.environ,
            reviewer=self._reviewer(launch),
            on_event=on_event,
            asker=terminal_asker() if self.stdin_isatty and not self.args.json and not launch.unattended else None,
            on_notice=lambda t: self.stderr.print(Text(f"reasonix: {t}")),
            transport=self.recorder.transport() if self.recorder is not None else None,
        )
        setup = launched.setup
        if setup.notice:
            Console(stderr=True).print(Text(f"reasonix: {setup.notice}", style="red"))
        if setup.options.allow_unconfined_verify and unconfined_reason(setup.sandbox) is not None:
            warning = "--allow-unconfined-verify: the plan's verify commands will run on this machine, unconfined"
            Console(stderr=True).print(Text(f"reasonix: {warning}", style="red"))
        self.mcp = launched.mcp
        self.launched = launched
        return launched.runner

    def _resolve_resume(self, workspace: Path, resume: str) -> str:
        """``--resume`` without an id: the latest resumable run (and say which); an unknown id: the nearest ones."""
        from orchestrator.runs.history import latest_resumable, resolve_run
        from orchestrator.text.wording import shorten

        if resume:
            return resolve_run(workspace, resume).run_id
        latest = latest_resumable(workspace)
        if latest is None:
            raise UsageError("there is no paused or interrupted run to resume here; `reasonix runs` lists the runs")
        what = f"resuming the latest resumable run {latest.run_id} ({latest.status}): {shorten(latest.objective, 60)}"
        self.stderr.print(Text(what, style="dim"), soft_wrap=True)
        return latest.run_id

    # -------------------------------------------------------------------------------------------- advice

    def resume_command(self, runner: GoalRunner) -> str:
        workspace = Path(self.args.workspace)
        return resume_command(
            runner.store.run_id,
            workspace=workspace,
            base_url=self.args.base_url,
            budget=runner.budget,
            yes=bool(getattr(self.args, "yes", False)),
        )

    def plan_file(self, runner: GoalRunner) -> Path:
        path = revision_path(runner.store.dir, runner.record.plan_revision)
        try:
            return path.relative_to(Path.cwd())
        except ValueError:
            return path

    # -------------------------------------------------------------------------------------------- running

    def run(self) -> int:
        fmt = getattr(self.args, "output_format", None)
        if fmt in ("json", "stream-json"):
            self.args.json = True
        json_out = JsonLinesRenderer(sys.stdout) if self.args.json else None
        if fmt == "stream-json":
            from orchestrator.headless.goal_stream import GoalStreamJson

            json_out = GoalStreamJson(sys.stdout)
        ui: GoalTerminalUI | None = None

        def on_event(event: AnyEvent) -> None:
            if isinstance(event, ReviewDecided):
                self.last_review = event.decision
            if json_out is not None:
                json_out(event)  # type: ignore[arg-type]
            elif ui is not None:
                ui(event)

        try:
            runner = self.build(on_event)
        except PlanFileError as exc:
            hint = "Fix it (`reasonix plans validate FILE` checks it), or make a new one with `reasonix plan`."
            return self.fail(f"{exc}\n{hint}", ExitCode.FAILED)
        except ReasonixError as exc:
            return self.fail(str(exc), ExitCode.USAGE)
        except ValidationError as exc:
            return self.fail(f"invalid option: {exc.errors()[0]['msg']}", ExitCode.USAGE)
        launched = self.launched
        if launched is not None and launched.unattended:
            self.unattended = UnattendedRun(runner, max_runtime_s=launched.max_runtime_s)
        if hasattr(json_out, "run_id"):
            json_out.run_id = runner.store.run_id  # type: ignore[union-attr]
        if json_out is None:
            ui = GoalTerminalUI(self.stdout, plan_state=runner.plan_with_state, budget=runner.budget)
            self.stdout.print(
                Text(f"{self.mode} · run {runner.store.run_id} · {runner.store.dir}", style="dim"), soft_wrap=True
            )
            if runner.plan is not None:
                ui.show_plan(f"plan r{runner.plan.revision}")
            ui.start()

        def interrupted_notice() -> None:
            if ui is not None:
                ui.stop()
            self.stderr.print(
                Text("interrupted: cancelling the current turn and pausing the goal (Ctrl-C again exits at once)"),
                style="yellow",
            )

        async def work() -> GoalOutcome:
            mcp = self.mcp.open() if self.mcp is not None else contextlib.nullcontext()
            async with mcp:  # the servers' tools must be listed before the sessions' prefixes are frozen
                if self.unattended is None:
                    return await runner.run(self.mode)
                outcome = await self.unattended.run(self.mode)
                await self._leave_summary(outcome)
                return outcome

        error: str | None = None
        outcome: GoalOutcome | None = None
        try:
            outcome = run_interruptible(work, resource=runner.client, on_first=interrupted_notice)
        except* (DeepSeekError, ReasonixError, PlanError) as group:
            # What stopped the goal from outside (an API error, most often): one message, never the group's traceback.
            error = str(next(leaves(group)))
        finally:
            if ui is not None:
                ui.stop()
            runner.store.sync()
            runner.store.close()
            self._write_recording(runner, outcome.status if outcome is not None else None)
        if error is not None:
            return self._stopped_by_error(runner, json_out, error)
        if outcome is None:
            return self._interrupted(runner, json_out)
        return self._finished(runner, outcome, json_out)

    async def _leave_summary(self, outcome: GoalOutcome) -> None:
        """An unattended run's ``summary.md`` and ``--notify-cmd`` (:meth:`UnattendedRun.conclude`)."""
        assert self.unattended is not None and self.launched is not None
        resume = self.resume_command(self.unattended.runner)
        path, problem = await self.unattended.conclude(outcome, resume=resume, notify_cmd=self.launched.notify_cmd)
        self.stderr.print(Text(f"summary: {path}", style="dim"), soft_wrap=True)
        if problem is not None:
            self.stderr.print(Text(f"reasonix {self.prog}: {problem}", style="yellow"), soft_wrap=True)

    def _write_recording(self, runner: GoalRunner, status: str | None) -> None:
        if self.recorder is None:
            return
        path: Path = self.args.record
        written = self.recorder.write(
            path,
            command=self.mode,
            objective=self.objective,
            status=status,
            settings=settings_from_goal_options(runner.options),
        )
        line = recording_line(written, len(self.recorder.exchanges), path)
        self.stderr.print(Text(line, style="dim"), soft_wrap=True)

    def _stopped_by_error(self, runner: GoalRunner, json_out: JsonLinesRenderer | None, error: str) -> int:
        command = self.resume_command(runner)
        if json_out is not None:
            json_out.write({"kind": "error", "run_id": runner.store.run_id, "error": error, "resume_command": command})
        self.fail(f"{error}\nThe goal is saved; once the cause is fixed, continue it with: {command}", ExitCode.FAILED)
        return ExitCode.FAILED

    def _interrupted(self, runner: GoalRunner, json_out: JsonLinesRenderer | None) -> int:
        command = self.resume_command(runner)
        if runner.record.state in TERMINAL_STATES:
            self._show_summary(runner.outcome(), json_out, resume_command=command)
        self.stderr.print(Text(f"reasonix {self.prog}: interrupted; the goal is paused. Resume it with: {command}"))
        return ExitCode.INTERRUPTED

    def _show_summary(self, outcome: GoalOutcome, json_out: JsonLinesRenderer | None, **extra: object) -> None:
        summary = outcome.to_summary(self.mode).model_copy(update={k: v for k, v in extra.items() if v is not None})
        if json_out is not None:
            json_out.write(summary.model_dump(mode="json"))
        else:
            self.stdout.print(summary_text(summary), soft_wrap=True)

    def _finished(self, runner: GoalRunner, outcome: GoalOutcome, json_out: JsonLinesRenderer | None) -> int:
        status = outcome.status
        if self.mode == "plan" and status == "paused" and self.last_review == "approve":
            path = self.plan_file(runner)
            parts = ["reasonix", "exec", str(path)]
            if Path(self.args.workspace) != Path("."):
                parts += ["--workspace", str(self.args.workspace)]
            command = shlex.join(parts)
            self._show_summary(outcome, json_out, plan_file=str(path), exec_command=command)
            out = self.stderr if json_out is not None else self.stdout
            out.print(Text(f"plan approved and saved: {path}", style="green"), soft_wrap=True)
            out.print(Text(f"execute it with: {command}"), soft_wrap=True)
            return ExitCode.OK
        if status == "paused":
            command = self.resume_command(runner)
            self._show_summary(outcome, json_out, resume_command=command)
            out = self.stderr if json_out is not None else self.stdout
            out.print(Text(f"paused: {outcome.summary}", style="yellow"), soft_wrap=True)
            out.print(Text(f"resume with: {command}"), soft_wrap=True)
            return ExitCode.PAUSED
        self._show_summary(outcome, json_out)
        if status == "cancelled":
            # The person's own choice, not an error: the goal view (or the --json summary) has said it once already.
            return ExitCode.CANCELLED
        if status == "complete":
            if json_out is None:
                self.stdout.print(Text(outcome.summary, style="green"), soft_wrap=True)
            return ExitCode.OK
        what = {
            "blocked": "blocked: a person is needed to go on"
            if self.unattended is not None
            else "blocked: the planner needs an answer only you can give",
        }.get(status, status)
        return self.fail(f"{what}: {outcome.summary}" if outcome.summary else what, ExitCode.FAILED)


def _nobody_to_review(launch: GoalLaunch, workspace: Path) -> ReviewUnavailableError:
    """A resumed run needs a review (no plan yet, or one no review approved) and there is no terminal to ask on."""
    assert launch.resume is not None
    previous = launch.previous()
    planned = previous is not None and previous.plan_revision > 0
    what = (
        "has a plan that no review approved yet"
        if planned
        else "has no plan yet, and the plan it makes next needs a review"
    )
    return ReviewUnavailableError(
        f"run {launch.resume} {what}, and standard input is not a terminal, so nobody can review it; nothing was "
        f"executed. Resume it in a terminal to review it ({resume_command(launch.resume, workspace=workspace)}), or "
        "add --yes to approve it without review."
    )


def run_command(args: argparse.Namespace, mode: GoalMode, prog: str) -> int:
    return GoalCommand(args=args, mode=mode, prog=prog).run()
