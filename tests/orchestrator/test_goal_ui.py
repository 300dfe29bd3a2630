"""The goal's terminal UI byte for byte (no colour, not a terminal), its live mode, and Ctrl-C handling with real
signals."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio
import trio.testing
from rich.console import Console

from orchestrator.build import create_runner
from orchestrator.cli.goal_command import read_plan_file, watch_interrupts
from orchestrator.events import (
    BudgetWarning,
    Escalated,
    GoalStateChanged,
    PlanProposed,
    ReviewDecided,
    StepReported,
    StepStarted,
    StepVerified,
    VerifyOutcome,
)
from orchestrator.goal.runner import GoalOptions
from orchestrator.policy.budget import Budget, BudgetTracker, BudgetUsage
from orchestrator.summary import SessionFigures, Summary
from orchestrator.ui.goal_lines import escalation_line
from orchestrator.ui.goal_view import GoalTerminalUI, summary_text
from plans.schema import Plan, StepStatus
from sessions.accounting.diagnostics import RequestDiagnostics
from sessions.events import (
    DiagnosticsReported,
    StreamUpdate,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageReported,
)
from sessions.wire.messages import Usage
from sessions.wire.stream import ContentDelta, ReasoningDelta
from tests.support.goal_diamond import diamond_executor, diamond_planner, diamond_workspace

from .goal_support import goal_env, script, step
from .run_support import ROOT

PLAN = Plan.model_validate(
    {
        "objective": "Grow calc",
        "steps": [
            step("S1", "Add ops", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"]),
            step("S2", "Add mul", deps=["S1"], writes=["calc/mul.py"]),
        ],
    }
)


def _console(width: int = 110) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, color_system=None, force_terminal=False), out


def _usage(session: str, cost: float, total: float, prompt: int, hit: int) -> UsageReported:
    return UsageReported(
        session=session,
        model="deepseek-v4-flash",
        usage=Usage(
            prompt_tokens=prompt,
            prompt_cache_hit_tokens=hit,
            prompt_cache_miss_tokens=prompt - hit,
            completion_tokens=10,
        ),
        cost_usd=cost,
        session_cost_usd=total,
    )


def _diag(session: str, index: int, prompt: int, hit: int, *, reason: str | None = None) -> DiagnosticsReported:
    return DiagnosticsReported(
        session=session,
        diagnostics=RequestDiagnostics(
            request_index=index,
            model="deepseek-v4-flash",
            prefix_fingerprint="abc",
            log_epoch=0,
            prefix_changed=False,
            change_reason=reason,
            prompt_tokens=prompt,
            hit_tokens=hit,
            miss_tokens=prompt - hit,
            completion_tokens=10,
            hit_ratio=hit / prompt,
            cumulative_hit_ratio=hit / prompt,
            expected_hit_tokens=hit,
            unexplained_miss=False,
        ),
    )


def test_a_goal_on_a_plain_console_byte_for_byte() -> None:
    console, out = _console()
    statuses: dict[str, StepStatus] = {}
    tracker = BudgetTracker(Budget(usd=0.01), already_used=BudgetUsage(usd=0.0))
    ui = GoalTerminalUI(console, plan_state=lambda: PLAN.with_statuses(statuses), budget=tracker)
    events: list[Any] = [
        GoalStateChanged(state="planning", previous=None),
        PlanProposed(revision=1, plan=PLAN.model_dump(mode="json")),
        ReviewDecided(decision="approve", automatic=True),
        GoalStateChanged(state="executing", previous="awaiting_review"),
        StepStarted(step_id="S1", title="Add ops", attempt=1, model="deepseek-v4-flash"),
        StreamUpdate(session="executor", event=ReasoningDelta(text="Write the ")),
        StreamUpdate(session="executor", event=ReasoningDelta(text="file.")),
        ToolStarted(session="executor", call_id="c1", name="write_file", args_preview='{"path": "calc/ops.py"}'),
        ToolFinished(session="executor", call_id="c1", name="write_file", is_error=False, preview="ok", chars=2),
        _usage("executor", 0.0021, 0.0021, 4000, 3840),
        _diag("executor", 1, 4000, 3840),
        Escalated(
            session="executor",
            trigger="marker",
            reason="the refactor spans modules",
            from_model="deepseek-v4-flash",
            to_model="deepseek-v4-pro",
            flash_cost_usd=0.0003,
            flash_cost_estimated=True,
            wasted_chars=36,
        ),
        StreamUpdate(session="executor", event=ContentDelta(text="S1 done.")),
        _usage("executor", 0.0062, 0.0083, 4200, 4096),
        _diag("executor", 2, 4200, 4096, reason="the model changed"),
        BudgetWarning(resource="usd", used=0.0083, limit=0.01),
        TurnFinished(session="executor", status="done", text="S1 done.", requests=2, failures=0, cost_usd=0.0083),
        StepReported(step_id="S1", status="done", summary="wrote calc/ops.py"),
        StepVerified(
            step_id="S1",
            ok=False,
            outcomes=(VerifyOutcome(command="python3 -c 'import calc.ops'", exit_code=1, ok=False, output="boom"),),
        ),
        StepStarted(step_id="S1", title="Add ops", attempt=2, model="deepseek-v4-flash"),
        StepVerified(
            step_id="S1",
            ok=True,
            outcomes=(VerifyOutcome(command="python3 -c 'import calc.ops'", exit_code=0, ok=True),),
        ),
    ]
    for event in events:
        if isinstance(event, StepVerified) and event.ok:
            statuses[event.step_id] = StepStatus.DONE
        if isinstance(event, UsageReported):
            tracker.charge(usd=event.cost_usd, requests=1)
        ui(event)
    ui.stop()
    assert out.getvalue() == (
        "» planning\n"
        "plan r1 proposed\n"
        "Grow calc  r1 · 0/2 done\n"
        "├── wave 1\n"
        "│   └── ○ S1 Add ops  pending\n"
        "│       ├── Add ops\n"
        "│       ├── writes calc/ops.py\n"
        "│       └── verify `python3 -c 'import calc.ops'`\n"
        "└── wave 2\n"
        "    └── ○ S2 Add mul  pending · after S1\n"
        "        ├── Add mul\n"
        "        ├── writes calc/mul.py\n"
        "        └── no verify command: nothing the supervisor runs would show this step is done\n"
        "review: approve (automatic)\n"
        "» executing\n"
        "◐ S1 Add ops · deepseek-v4-flash\n"
        "Write the file.\n"
        "▸ write_file calc/ops.py · ok\n"
        "executor · turn $0.0021 · session $0.0021 · cache planner – · executor 96.0% · overall 96.0% · "
        "budget $0.0021 of $0.01\n"
        "⤴ escalated to deepseek-v4-pro: the refactor spans modules (flash call aborted after 36 chars, $0.0003 est.)\n"
        "S1 done.\n"
        "cache (executor): the model changed\n"
        "executor · turn $0.0083 · session $0.0083 · cache planner – · executor 96.8% · overall 96.8% · "
        "budget $0.0083 of $0.01\n"
        "⚠ budget: 83% used ($0.0083 of $0.01); the goal pauses at 100%\n"
        "  S1 reported done: wrote calc/ops.py\n"
        "✗ S1 verification failed: `python3 -c 'import calc.ops'` exit 1, expected 0\n"
        "    boom\n"
        "◐ S1 Add ops · attempt 2 · deepseek-v4-flash\n"
        "✓ S1 verified: 1 verify command passed\n"
    )


def test_escalation_lines_say_why_and_what_it_cost() -> None:
    hint = Escalated(
        session="executor", trigger="hint", reason="step S3 is marked needs_pro", from_model="f", to_model="pro-x"
    )
    assert escalation_line(hint).plain == "⤴ escalated to pro-x: step S3 is marked needs_pro"
    assert escalation_line(hint).style == "yellow"
    marker = hint.model_copy(
        update={
            "trigger": "marker",
            "reason": "hard",
            "flash_cost_usd": 0.0012,
            "wasted_chars": 7,
            "wasted_reasoning_chars": 420,
        }
    )
    assert escalation_line(marker).plain == (
        "⤴ escalated to pro-x: hard (flash call aborted after 7 chars and 420 reasoning chars, $0.0012)"
    )


def _figures(requests: int, prompt: int, hit: int, cost: float) -> SessionFigures:
    usage = Usage(prompt_tokens=prompt, prompt_cache_hit_tokens=hit, prompt_cache_miss_tokens=prompt - hit)
    return SessionFigures.of(requests=requests, usage=usage, cost_usd=cost)


def test_summary_line_from_the_outcome_summary() -> None:
    summary = Summary(
        command="goal",
        status="paused",
        ok=False,
        steps_done=2,
        steps_total=4,
        requests=9,
        prompt_tokens=10000,
        prompt_cache_hit_tokens=9812,
        prompt_cache_miss_tokens=188,
        completion_tokens=0,
        cost_usd=0.0123,
        cache_hit_ratio=0.9812,
        sessions={"planner": _figures(9, 1000, 950, 0.0123), "executor": _figures(0, 0, 0, 0.0)},
        escalations=1,
        replans=0,
    )
    assert summary_text(summary).plain == (
        "paused · 2/4 steps · 9 requests · $0.0123 · cache 98.1% (planner 95.0%, executor –) · 1 escalation · 0 replans"
    )


async def test_a_real_goal_on_the_terminal_ui(tmp_path: Path) -> None:
    """The UI fed by a real goal (emulator, real tools and verify commands): one line per step state change."""
    ws = diamond_workspace(tmp_path)
    console, out = _console(120)
    holder: list[GoalTerminalUI] = []
    async with goal_env(script(diamond_planner(), diamond_executor())) as (_emu, client):
        runner = create_runner(
            workspace=ws,
            client=client,
            objective="Grow calc",
            options=GoalOptions(parallel=1),  # its script runs the steps in order
            reviewer=None,
            on_event=lambda event: holder[0](event),
            run_id="run-ui",
            config_dir=ws / ".no-user-config",
        )
        holder.append(GoalTerminalUI(console, plan_state=runner.plan_with_state, budget=runner.budget))
        outcome = await runner.run()
    assert outcome.status == "complete"
    lines = out.getvalue().splitlines()
    started = [line for line in lines if line.startswith("◐ ")]
    assert len(started) == 4 and started[0].startswith("◐ S1 ") and started[-1].startswith("◐ S4 ")
    assert sum(line.endswith("verified: 1 verify command passed") for line in lines) == 4
    assert "Grow calc  r1 · 0/4 done" in lines
    footers = [line for line in lines if " · turn $" in line]
    assert len(footers) == 11 and footers[-1].startswith("planner · turn $")  # one per request
    assert "budget $" in footers[-1] and "(no limit)" in footers[-1]
    assert any(line.startswith("▸ list_dir ") for line in lines)
    # the session hands the full arguments to the terminal: the path first, then the size of what was written
    assert sum(bool(re.fullmatch(r"▸ write_file calc/\w+\.py \(\d+ lines?\) · ok", line)) for line in lines) == 3


def test_live_mode_on_a_terminal_keeps_whole_lines_above_the_region() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system="standard", force_terminal=True)
    ui = GoalTerminalUI(console, plan_state=lambda: PLAN)
    ui.start()
    ui(StepStarted(step_id="S1", title="Add ops", attempt=1, model="m"))
    ui(StreamUpdate(session="executor", event=ContentDelta(text="partial ")))
    ui(StreamUpdate(session="executor", event=ContentDelta(text="line\nnext")))
    ui(_usage("executor", 0.001, 0.001, 1000, 896))
    ui(_diag("executor", 1, 1000, 896))
    ui.stop()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "\x1b[" in out.getvalue()  # drawn for a terminal
    assert "◐ S1 Add ops · m" in text and "partial line" in text and "next" in text
    assert "Grow calc" in text and "executor · turn $0.0010" in text


def test_exec_plan_file_validation_names_every_problem(tmp_path: Path) -> None:
    good = tmp_path / "plan.json"
    good.write_text(PLAN.model_dump_json())
    assert read_plan_file(good) == PLAN
    broken = tmp_path / "broken.json"
    broken.write_text('{"objective": "x", "steps": [{"id": "A", "title": "a"}]}')
    try:
        read_plan_file(broken)
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        assert "step A: 'instructions'" in str(exc)
    else:
        raise AssertionError("an incomplete plan was accepted")


async def test_first_sigint_cancels_the_work_second_exits_at_once() -> None:
    seen: list[str] = []
    work = trio.CancelScope()
    second = trio.Event()

    def on_second() -> None:
        seen.append("second")
        second.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: watch_interrupts(work, on_first=lambda: seen.append("first"), on_second=on_second))
        await trio.testing.wait_all_tasks_blocked()
        with work:
            os.kill(os.getpid(), signal.SIGINT)
            await trio.sleep_forever()
        assert work.cancelled_caught and seen == ["first"]
        os.kill(os.getpid(), signal.SIGINT)
        await second.wait()
        nursery.cancel_scope.cancel()
    assert seen == ["first", "second"]


def test_hard_exit_flushes_what_was_printed_and_exits_130() -> None:
    code = "import sys; from orchestrator.signals import hard_exit; print('kept', end=''); sys.stderr.write('e'); "
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout to a pipe is block-buffered
    proc = subprocess.run(
        [sys.executable, "-c", code + "hard_exit()"], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )
    assert proc.returncode == 130 and proc.stdout == "kept" and proc.stderr == "e"


async def test_an_edit_at_review_shows_the_edited_tree_and_its_changes_once(tmp_path: Path) -> None:
    """Issue 23 item 14: after an `e` edit the tree and the diff were printed twice (by the reviewer, then again by
    the goal display and the next review round). A real goal, a real editor process, the reviewer and the display on
    one console as `reasonix goal` sets them up; and the judging turn is called that, not re-planning (item 32)."""
    from orchestrator.review.reviewer import TerminalReviewer
    from tests.support.review import Typist, fake_editor

    ws = diamond_workspace(tmp_path)
    retitle = ('"title": "Add calc/mul.py"', '"title": "Add calc/mul.py with mul()"')
    editor, _home = fake_editor(tmp_path, [retitle])
    console, out = _console(120)
    holder: list[GoalTerminalUI] = []
    reviewer = TerminalReviewer(console, read_line=Typist("e", "a"), editor=editor, show_plan=False)
    async with goal_env(script(diamond_planner(), diamond_executor())) as (_emu, client):
        runner = create_runner(
            workspace=ws,
            client=client,
            objective="Grow calc",
            options=GoalOptions(parallel=1),
            reviewer=reviewer,
            on_event=lambda event: holder[0](event),
            run_id="run-edit",
            config_dir=ws / ".no-user-config",
        )
        holder.append(GoalTerminalUI(console, plan_state=runner.plan_with_state, budget=runner.budget))
        outcome = await runner.run()
    assert outcome.status == "complete", outcome.summary
    text = out.getvalue()
    assert text.count("~ S2 Add calc/mul.py with mul()") == 1, text
    assert text.count("title: Add calc/mul.py → Add calc/mul.py with mul()") == 1, text
    assert text.count("Grow calc  r1 · 0/4 done") == 1 and text.count("Grow calc  r2 · 0/4 done") == 1, text
    judging = (
        "every step is verified and its verify commands pass again on the host: asking the planner for its verdict"
    )
    assert f"» judging: {judging}" in text
    assert "» replanning" not in text


def test_after_a_resume_the_footer_says_its_ratios_count_since_the_resume() -> None:
    """Issue 23 item 16: after a resume the footer's `overall` (this process) and the summary's `cache` (the whole
    run) differed with nothing saying why; the footer now names what it counts."""
    console, out = _console(200)
    fresh = GoalTerminalUI(console)
    fresh(_usage("planner", 0.001, 0.001, 1000, 896))
    fresh(_diag("planner", 1, 1000, 896))
    assert "· cache planner 89.6%" in out.getvalue() and "since resume" not in out.getvalue()
    console, out = _console(200)
    resumed = GoalTerminalUI(console)
    resumed(_usage("executor", 0.001, 0.004, 1000, 0))
    resumed(_diag("executor", 7, 1000, 0, reason="first request since the session was resumed"))
    assert "· cache since resume planner – · executor 0.0% · overall 0.0%" in out.getvalue()
