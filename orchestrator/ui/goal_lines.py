"""Lines of the goal view that say what happened to a step: an escalation and what it cost, a failed verification
with the command and the tail of its output. Model and command text in them is neutralised. And :func:`print_whole`,
which prints a plan tree without cropping it."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType
from rich.text import Text

from orchestrator.events import Escalated, GoalStateChanged, ProAskedForPro, StepVerified
from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted
from orchestrator.ui.tool_lines import INDENT
from plans import VerifyCommand, verify_text

VERIFY_TAIL_LINES = 12
WHOLE_WIDTH = 10_000
"""The width a tree is laid out at without a terminal: wide enough that no line of it wraps or is cropped."""


def print_whole(console: Console, renderable: RenderableType) -> None:
    """Print a tree (or any block) so that nothing of it is lost: on a terminal wrapped at its width, elsewhere (a
    pipe, a file) each line whole, however long; never cropped at the console's width (80 without a terminal)."""
    if console.is_terminal:
        console.print(renderable, soft_wrap=False)
        return
    buffer = io.StringIO()
    Console(file=buffer, width=WHOLE_WIDTH, color_system=None, highlight=False).print(renderable)
    for line in buffer.getvalue().splitlines():
        console.print(Text(line.rstrip()), soft_wrap=True, highlight=False)


API_ERROR_REASON = "stopped by a DeepSeek API error: "
"""How a goal's paused reason starts when an API error stopped it (the error itself is printed once, after it)."""
PLAN_SAVED_REASON = "plan approved and saved"
"""How a ``reasonix plan`` run's paused reason starts: the plan is saved for ``reasonix exec``, nothing waits."""
JUDGING_REASON = "every step is verified"
"""How the reason starts when the goal asks the planner for its verdict (the state machine calls that re-planning)."""


def state_line(event: GoalStateChanged) -> Text:
    """``» executing``, ``» paused: <reason>``, in words that fit what happens: ``judging`` when the planner is asked
    for its verdict, ``planned`` when ``reasonix plan`` saved its plan, and an API error named, not repeated (the
    command prints it in full under the goal, with how to continue)."""
    reason = f": {event.reason}" if event.reason else ""
    state: str = event.state
    if state == "replanning" and event.reason.startswith(JUDGING_REASON):
        state = "judging"  # nothing is re-planned unless the verdict says so
    if state == "paused" and event.reason.startswith(PLAN_SAVED_REASON):
        state = "planned"  # not a goal waiting to be resumed
    if state == "paused" and event.reason.startswith(API_ERROR_REASON):
        reason = f": {API_ERROR_REASON.removesuffix(': ')} (the error and how to continue follow)"
    return Text(f"» {state}{reason}", style="bold")


def escalation_line(event: Escalated) -> Text:
    """``⤴ escalated to deepseek-v4-pro: <reason> (flash call aborted after 36 chars, $0.0003 est.)``"""
    line = f"⤴ escalated to {event.to_model}: {event.reason}"
    if event.wasted_chars or event.wasted_reasoning_chars or event.flash_cost_usd:
        chars = f"{event.wasted_chars} chars"
        if event.wasted_reasoning_chars:
            chars += f" and {event.wasted_reasoning_chars} reasoning chars"
        estimate = " est." if event.flash_cost_estimated else ""
        line += f" (flash call aborted after {chars}, ${event.flash_cost_usd:.4f}{estimate})"
    return Text(line, style="yellow")


def pro_marker_line(event: ProAskedForPro) -> Text:
    """``⚠ pro asked for pro (<reason>): there is no stronger model; …`` — what the turn's end means."""
    why = f" ({neutralise(event.reason)})" if event.reason else ""
    return Text(
        f"⚠ {event.session}: {event.model} asked for pro{why}, but it is pro already: there is no stronger model, "
        "so its reply stands and the turn ends here (a step goes on to its verification)",
        style="yellow",
    )


def _verify_failure(event: StepVerified) -> str:
    failed = [o for o in event.outcomes if not o.ok]
    if not failed:
        return "; ".join(event.problems) if event.problems else "failed"
    first = failed[0]
    shown = verify_text(VerifyCommand(command=first.command))
    how = "timed out" if first.timed_out else f"exit {first.exit_code}, expected {first.expected}"
    more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"{shown} {how}{more}"


def output_tail(output: str, max_lines: int = VERIFY_TAIL_LINES) -> Text:
    """The last ``max_lines`` lines of a command's output, indented (empty when there was no output); when lines
    were left out, a first line says how many."""
    lines = neutralise(output).rstrip().splitlines()
    text = Text()
    if not lines:
        return text
    if len(lines) > max_lines:
        text.append(f"{INDENT}… {counted(len(lines) - max_lines, 'earlier line')}\n", style="dim")
        lines = lines[-max_lines:]
    text.append("\n".join(INDENT + line.rstrip() for line in lines))
    return text


def verify_failure_text(event: StepVerified) -> Text:
    """``✗ S1 verification failed: `cmd` exit 1, expected 0``, then the tail of that command's output."""
    what = "not done" if event.problems and all(o.ok for o in event.outcomes) else "verification failed"
    text = Text(f"✗ {event.step_id} {what}: {_verify_failure(event)}", style="bold red")
    failed = [o for o in event.outcomes if not o.ok]
    tail = output_tail(failed[0].output) if failed else Text()
    if tail.plain:
        text.append("\n")
        text.append_text(tail)
    return text
