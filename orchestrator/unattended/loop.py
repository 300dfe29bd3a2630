"""The unattended run: the goal, bounded by its maximum runtime (waits included). DeepSeek's outages are waited out
at the request itself (:mod:`orchestrator.policy.outage`, the goal's reply source when it runs unattended), so the
run never pauses for one; what would wait for a person ends it blocked (:meth:`GoalContext.held
<orchestrator.goal.context.GoalContext.held>`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.config.durations import format_duration
from orchestrator.goal.context import GoalMode
from orchestrator.goal.outcome import GoalOutcome
from orchestrator.goal.runner import GoalRunner
from orchestrator.unattended.report import RUNTIME_PREFIX, headline, notify, summary_markdown, write_summary


@dataclass
class UnattendedRun:
    """Drives one unattended goal to its end (see the module's docstring)."""

    runner: GoalRunner
    max_runtime_s: float | None = None

    def stopped_reason(self) -> str:
        assert self.max_runtime_s is not None
        return f"{RUNTIME_PREFIX}: --max-runtime {format_duration(self.max_runtime_s)} reached; the goal is resumable"

    @property
    def waits(self) -> int:
        return self.runner.outages.waits if self.runner.outages is not None else 0

    @property
    def waited_s(self) -> float:
        return self.runner.outages.waited_s if self.runner.outages is not None else 0.0

    async def run(self, mode: GoalMode = "goal") -> GoalOutcome:
        """Run the goal to its one terminal state: complete, blocked, failed, or paused (stopped by budget or by
        runtime, resumable). A cancellation from outside (Ctrl-C) pauses it, resumable, and propagates."""
        assert self.runner.options.unattended, "an unattended run needs GoalOptions(unattended=True)"
        if self.max_runtime_s is None:
            return await self.runner.run(mode)
        deadline = trio.current_time() + self.max_runtime_s
        self.runner.stop_at = (deadline, self.stopped_reason())
        with trio.move_on_at(deadline):
            return await self.runner.run(mode)  # cut at the deadline: the runner paused itself with the reason
        return self.runner.outcome()

    async def conclude(self, outcome: GoalOutcome, *, resume: str, notify_cmd: str | None) -> tuple[Path, str | None]:
        """Write ``summary.md`` and run ``notify_cmd`` (when given): the summary's path, and what went wrong with the
        notification (``None``: nothing)."""
        runner = self.runner
        budget_reached = bool(runner.budget.exhausted())
        text = summary_markdown(
            outcome,
            objective=runner.record.objective,
            resume=resume,
            budget_reached=budget_reached,
            waits=self.waits,
            waited_s=self.waited_s,
        )
        path = write_summary(runner.store.dir, text)
        if not notify_cmd:
            return path, None
        env = {
            "REASONIX_RUN_ID": outcome.run_id,
            "REASONIX_STATUS": headline(outcome, budget_reached=budget_reached),
            "REASONIX_REASON": outcome.summary,
            "REASONIX_SUMMARY": str(path),
        }
        return path, await notify(notify_cmd, env=env, cwd=runner.workspace)
