"""Issue 11 items 1, 4, 5 and 6 in the orchestrator: advice for a cut reply, one count of requests and cost on every
screen, restart lines that say what happened, a stuck pause that names the failing command."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from orchestrator.build import create_runner
from orchestrator.events import VerifyOutcome
from orchestrator.goal.runner import GoalOptions
from orchestrator.policy.stuck import ProgressTracker
from orchestrator.policy.verify import failure_digest, verify_feedback
from orchestrator.summary import TaskSummary, figures
from orchestrator.ui.goal_view import CostBoard, GoalTerminalUI, goal_footer, summary_text
from orchestrator.ui.stream import TerminalRenderer
from sessions.events import StreamUpdate, TurnFinished, UsageReported
from sessions.wire.messages import Usage
from sessions.wire.stream import StreamRestarted

from .goal_support import call, goal_env, reply, script, step


def _run_summary(status: str, model: str) -> TaskSummary:
    return TaskSummary(
        command="run",
        run_id="r",
        status=status,  # type: ignore[arg-type]
        ok=False,
        model=model,
        journal="j",
        **figures({"executor": (1, Usage(), 0.0)}),
    )


def test_run_advice_for_a_cut_reply_names_the_output_limit_and_never_suggests_the_model_in_use() -> None:
    length = _run_summary("length", "deepseek-v4-pro").advice()
    assert length is not None and "output limit" in length and "--model pro" not in length
    empty_pro = _run_summary("empty", "deepseek-v4-pro").advice()
    assert empty_pro is not None and "--model pro" not in empty_pro
    empty_flash = _run_summary("empty", "deepseek-v4-flash").advice()
    assert empty_flash is not None and "--model pro" in empty_flash


def _renderer_text(*events: Any) -> str:
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=200), spinner=False, tick=False)
    for event in events:
        renderer(event)
    renderer.end_line()
    return out.getvalue()


def test_a_retry_says_the_partial_reply_is_void_only_when_something_had_streamed() -> None:
    nothing = StreamRestarted(attempt=2, reason="HTTP 429", discarded_events=0)
    some = StreamRestarted(attempt=2, reason="connection dropped", discarded_events=3)
    assert "void" not in _renderer_text(StreamUpdate(session="executor", event=nothing))
    assert "void" in _renderer_text(StreamUpdate(session="executor", event=some))


def test_a_turn_cut_at_the_output_limit_reads_as_such() -> None:
    finished = TurnFinished(session="executor", status="length", text="", requests=1, failures=0, cost_usd=0.01)
    assert "cut at the output limit" in _renderer_text(finished)


def _usage(session: str, cost: float) -> UsageReported:
    return UsageReported(
        session=session, model="m", usage=Usage(prompt_tokens=10, total_tokens=10), cost_usd=cost, session_cost_usd=cost
    )


def test_the_footer_keeps_a_finished_turns_cost_until_the_next_turn_spends() -> None:
    board = CostBoard()
    board.usage(_usage("planner", 0.0123))
    board.turn_finished("planner")
    assert "turn $0.0123" in goal_footer(board, "planner", None).plain
    board.usage(_usage("planner", 0.001))
    assert "turn $0.0010" in goal_footer(board, "planner", None).plain


def _outcome(command: str, output: str) -> VerifyOutcome:
    return VerifyOutcome(command=command, exit_code=1, expected=0, ok=False, timed_out=False, output=output)


def test_the_stuck_pause_names_the_command_and_the_tail_of_its_output() -> None:
    outcomes = (
        _outcome("python3 -m pytest -q tests/test_calc.py", "collected 3\nE   AssertionError: 3 != 4\n1 failed"),
    )
    tracker = ProgressTracker()
    verdict = None
    for _ in range(3):
        verdict = tracker.record_failure("S1", verify_feedback(outcomes), "\n" + failure_digest(outcomes))
    assert verdict is not None
    assert "python3 -m pytest -q tests/test_calc.py" in verdict.reason
    assert "AssertionError: 3 != 4" in verdict.reason and "1 failed" in verdict.reason
    assert "1 of 1 command(s)" not in verdict.reason


async def test_the_live_ui_counts_requests_and_cost_as_goal_json_and_the_summary_do(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("notes\n")
    planner = [
        reply(
            call(
                "submit_plan",
                objective="Write a",
                steps=[step("S1", "Write a", writes=["a.txt"], verify=["test -f a.txt"])],
            )
        ),
        reply(content="Plan submitted."),
        reply(call("goal_verdict", verdict="complete", evidence=["a.txt exists"])),
        reply(content="Complete."),
    ]
    executor = [
        reply(content="<<<NEEDS_PRO: the step is subtle>>> I would rather not guess."),
        reply(call("write_file", path="a.txt", content="a\n"), reasoning="pro writes it"),
        reply(call("report_step", step_id="S1", status="done", summary="wrote a.txt", evidence=["a.txt"])),
        reply(content="S1 done."),
    ]
    out = io.StringIO()
    ui = GoalTerminalUI(Console(file=out, width=200), live=False, tick=False)
    async with goal_env(script(planner, executor)) as (_, client):
        runner = create_runner(
            workspace=ws,
            client=client,
            objective="Write a",
            options=GoalOptions(),
            reviewer=None,
            on_event=ui,
            run_id="run-1",
            config_dir=ws / ".no-user-config",
        )
        outcome = await runner.run()
    assert outcome.status == "complete" and outcome.record.escalations == 1
    record = json.loads((ws / ".reasonix" / "runs" / "run-1" / "goal.json").read_text())
    summary = outcome.to_summary()
    assert summary.requests == record["usage_requests"] == ui.board.requests
    assert abs(summary.cost_usd - record["usage_usd"]) < 1e-9
    assert abs(ui.board.cost_usd - summary.cost_usd) < 1e-9
    assert f"{summary.requests} requests" in summary_text(summary).plain


async def test_a_step_whose_reply_is_cut_twice_fails_clearly_and_goes_back_to_the_planner(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("notes\n")
    planner = [
        reply(
            call(
                "submit_plan",
                objective="Write a",
                steps=[step("S1", "Write a", writes=["a.txt"], verify=["test -f a.txt"])],
            )
        ),
        reply(content="Plan submitted."),
        reply(call("goal_verdict", verdict="blocked", question="How should the big file be split?")),
        reply(content="Blocked."),
    ]
    cut = reply(reasoning="So much to write", finish_reason="length")
    events: list[Any] = []
    async with goal_env(script(planner, [cut, cut])) as (emu, client):
        runner = create_runner(
            workspace=ws,
            client=client,
            objective="Write a",
            options=GoalOptions(),
            reviewer=None,
            on_event=events.append,
            run_id="run-1",
            config_dir=ws / ".no-user-config",
        )
        outcome = await runner.run()
        executor_stats = emu.stats()["sessions"]["executor"]
    assert executor_stats["requests"] == 2  # the cut reply, and its one retry with the largest max_tokens
    finished = [e for e in events if isinstance(e, TurnFinished) and e.session == "executor"]
    assert [e.status for e in finished] == ["length"]
    states = [e for e in events if getattr(e, "kind", "") == "goal_state" and e.state == "replanning"]
    assert states and "cut at the output limit" in states[0].reason
    assert outcome.status == "blocked"
    assert not any(getattr(e, "kind", "") == "step_verified" for e in events)  # nothing to verify: the step failed
