"""What an unattended goal leaves when it ends: ``summary.md`` in its run directory (what was done, what was not,
what it cost, how to resume) and, with ``--notify-cmd``, one command run with the outcome in its environment."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import trio

from orchestrator.config.durations import format_duration
from orchestrator.goal.outcome import GoalOutcome
from orchestrator.text.wording import counted
from plans import StepStatus

SUMMARY_FILE = "summary.md"
NOTIFY_TIMEOUT_S = 60.0
RUNTIME_PREFIX = "stopped by runtime"

_HEADLINE = {
    "complete": "complete",
    "blocked": "blocked",
    "failed": "failed",
    "cancelled": "cancelled",
}


def headline(outcome: GoalOutcome, *, budget_reached: bool) -> str:
    """The one terminal state in words: ``complete``, ``blocked``, ``failed``, or for a paused run ``stopped by
    runtime`` / ``stopped by budget`` (``budget_reached``: a limit was reached or its gate refused a request) /
    ``paused`` (all resumable)."""
    if outcome.status != "paused":
        return _HEADLINE[outcome.status]
    if outcome.summary.startswith(RUNTIME_PREFIX):
        return "stopped by runtime"
    return "stopped by budget" if budget_reached else "paused"


def summary_markdown(
    outcome: GoalOutcome,
    *,
    objective: str,
    resume: str,
    budget_reached: bool = False,
    waits: int = 0,
    waited_s: float = 0.0,
) -> str:
    """The text of ``summary.md``."""
    figures = outcome.to_summary("goal")
    state = headline(outcome, budget_reached=budget_reached)
    lines = [f"# Goal {outcome.run_id}: {state}", "", f"**Objective:** {objective}", ""]
    if outcome.summary:
        lines += [f"**Why it ended:** {outcome.summary}", ""]
    steps = outcome.plan.steps if outcome.plan is not None else []
    done = [s for s in steps if s.status is StepStatus.DONE]
    rest = [s for s in steps if s.status is not StepStatus.DONE]
    lines.append(f"## Done ({len(done)} of {len(steps)} steps)")
    lines += [f"- {s.id} {s.title}" + (f": {s.result}" if s.result else "") for s in done] or ["- nothing"]
    lines += ["", "## Not done"]
    lines += [f"- {s.id} {s.title} ({_state(s.status)})" for s in rest] or ["- nothing"]
    ratio = f"{figures.cache_hit_ratio:.1%}" if figures.cache_hit_ratio is not None else "n/a"
    lines += [
        "",
        "## Cost",
        f"- ${figures.cost_usd:.4f} over {figures.requests} requests (cache hit {ratio})",
        f"- {figures.escalations} escalations to pro, {figures.replans} re-plans",
    ]
    if waits:
        lines.append(f"- waited out DeepSeek {counted(waits, 'time')}, {format_duration(waited_s)} in all")
    if outcome.status != "complete":
        lines += ["", "## Resume", "", f"    {resume}"]
    return "\n".join(lines) + "\n"


def _state(status: StepStatus) -> str:
    return "interrupted; it runs again on resume" if status is StepStatus.RUNNING else status.value


def write_summary(run_dir: Path, text: str) -> Path:
    """Write ``summary.md`` (atomically: a reader never sees half of it); its path."""
    path = run_dir / SUMMARY_FILE
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


async def notify(command: str, *, env: Mapping[str, str], cwd: Path) -> str | None:
    """Run ``command`` (through ``sh -c``, as the user wrote it) with ``env`` added to the environment, nothing on
    its standard input, bounded by :data:`NOTIFY_TIMEOUT_S`. ``None`` when it succeeded, else what went wrong (the goal
    has ended either way; a failed notification never changes its outcome)."""
    with trio.move_on_after(NOTIFY_TIMEOUT_S) as scope:
        try:
            done = await trio.run_process(
                ["sh", "-c", command],
                env={**os.environ, **env},
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        except OSError as exc:
            return f"--notify-cmd could not start: {exc}"
    if scope.cancelled_caught:
        return f"--notify-cmd did not finish within {NOTIFY_TIMEOUT_S:.0f} s and was stopped"
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return f"--notify-cmd exited with status {done.returncode}: {tail[0]}".rstrip(": ")
    return None
