"""Unattended goals: outages waited out with a growing backoff, a maximum runtime, one terminal state, a stuck step
re-planned once, the summary file, ``--notify-cmd``, and nothing read from the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.build import resume_runner
from orchestrator.config.durations import parse_duration
from orchestrator.events import GoalFinished, GoalWaiting, PlanRevised, StepStarted
from orchestrator.goal.runner import GoalOptions
from orchestrator.policy.outage import Backoff
from orchestrator.unattended import UnattendedRun, summary_markdown, write_summary
from orchestrator.unattended.report import notify
from sessions.events import RequestStarted
from tests.support.patient_clock import drive

from .goal_support import call, executor_step, goal_env, new_runner, reply, script, step

OPS = "def add(a, b):\n    return a + b\n"
CHECK = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"
PLAN = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK])]
QUIET_PLAN = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["test -s calc/ops.py"])]
"""A verify command that ends at once: a test on trio's virtual clock cannot wait for a slow real process (its timeout
would jump); a writing step needs one (DESIGN §5 "Evidence from the host")."""
UNATTENDED = GoalOptions(parallel=1, unattended=True)


@pytest.fixture
def patient_clock() -> trio.testing.MockClock:
    """Virtual time that jumps only while no real process runs (tests/support/patient_clock.py): the run's git
    checkpoints and verify commands finish before the clock moves, however loaded the machine, and only the waits are
    skipped. The driver runs from the ``jumping`` fixture."""
    return trio.testing.MockClock()


@pytest.fixture
async def jumping(patient_clock: trio.testing.MockClock, nursery: trio.Nursery) -> None:
    nursery.start_soon(drive, patient_clock)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    return ws


def _outage(times: int) -> list[dict[str, object]]:
    """The executor's first reply comes after ``times`` HTTP 503s (the client gives up after 4 in a row)."""
    first, *rest = executor_step("S1", "calc/ops.py", OPS)
    return [{**first, "faults": [{"kind": "http_status", "status": 503, "times": times}]}, *rest]


def _verdict() -> dict[str, object]:
    return reply(call("goal_verdict", verdict="complete", evidence=["add works"]))


# ------------------------------------------------------------------------------------------------ the backoff


@given(st.floats(0.001, 1e6), st.floats(1.0, 1e3), st.floats(0.001, 1e9), st.integers(1, 10**6))
def test_a_wait_of_any_attempt_is_within_its_ceiling_and_never_overflows(
    initial: float, factor: float, ceiling: float, attempt: int
) -> None:
    """An outage of days counts attempts into the thousands: a float power of the factor overflowed."""
    wait = Backoff(initial_s=initial, factor=factor, max_s=ceiling).wait_s(attempt)
    assert 0 < wait <= max(ceiling, initial) and (attempt > 1 or wait == min(ceiling, initial))


def test_the_backoff_grows_by_its_factor_and_stops_at_its_ceiling() -> None:
    backoff = Backoff(initial_s=15, factor=2, max_s=300)
    assert [backoff.wait_s(n) for n in range(1, 8)] == [15, 30, 60, 120, 240, 300, 300]


@given(st.floats(min_value=0.01, max_value=1e6), st.sampled_from(["", "s", "m", "h", "d"]))
def test_a_duration_reads_as_its_number_times_its_unit(number: float, unit: str) -> None:
    factor = {"": 60, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    assert parse_duration(f"{number}{unit}") == pytest.approx(number * factor)


@pytest.mark.parametrize("text", ["", "0", "-5m", "2 hours", "h", "1w", "1.2.3h"])
def test_a_bad_duration_says_which_forms_are_accepted(text: str) -> None:
    with pytest.raises(ValueError, match=r"90s, 45m, 2h or 1\.5d"):
        parse_duration(text)


# ------------------------------------------------------------------------------------------------ outages


async def test_an_outage_is_waited_out_and_the_goal_completes_without_a_pause(
    tmp_path: Path, patient_clock: trio.testing.MockClock, jumping: None
) -> None:
    ws = _workspace(tmp_path)
    planner = [reply(call("submit_plan", objective="ops", steps=QUIET_PLAN)), _verdict()]
    events: list[object] = []
    async with goal_env(script(planner, _outage(10))) as (_emu, client):
        first = new_runner(client, ws, "ops", options=UNATTENDED, events=events)
        run = UnattendedRun(first)
        start = trio.current_time()
        outcome = await run.run()
        took = trio.current_time() - start
    assert outcome.status == "complete", outcome.summary
    assert (ws / "calc" / "ops.py").read_text() == OPS
    waits = [e for e in events if isinstance(e, GoalWaiting)]
    assert [(w.attempt, w.wait_s) for w in waits] == [(1, 15.0), (2, 30.0)]  # 10 = 4 + 4 + 2: two outages
    assert "503" in waits[0].reason
    assert took >= 45.0  # virtual minutes waited, not real ones
    assert run.waits == 2 and run.waited_s == pytest.approx(45.0, abs=1.0)
    text = summary_markdown(outcome, objective="ops", resume="-", waits=run.waits, waited_s=run.waited_s)
    assert "- waited out DeepSeek 2 times, 45 s in all\n" in text and "## Resume" not in text
    # One terminal state: the goal never said it was paused, and finished once.
    finished = [e for e in events if isinstance(e, GoalFinished)]
    assert [f.status for f in finished] == ["complete"]
    journal = [json.loads(line) for line in (first.store.dir / "events.jsonl").read_text().splitlines()]
    assert [e["wait_s"] for e in journal if e["kind"] == "goal_waiting"] == [15.0, 30.0]  # journaled
    assert [e.step_id for e in events if isinstance(e, StepStarted)] == ["S1"]  # the same attempt went on
    # The request waited and was sent again as it was: no second copy of the step's message, one request started.
    sent = [(e.request_index, e.messages) for e in events if isinstance(e, RequestStarted) and e.session == "executor"]
    assert sent == [(1, 2), (2, 4)]


async def test_a_runtime_shorter_than_the_outage_stops_the_goal_resumable(
    tmp_path: Path, patient_clock: trio.testing.MockClock, jumping: None
) -> None:
    ws = _workspace(tmp_path)
    planner = [reply(call("submit_plan", objective="ops", steps=QUIET_PLAN)), _verdict()]
    events: list[object] = []
    async with goal_env(script(planner, _outage(40))) as (_emu, client):
        first = new_runner(client, ws, "ops", options=UNATTENDED, events=events)
        run = UnattendedRun(first, max_runtime_s=120.0)
        start = trio.current_time()
        outcome = await run.run()
        assert trio.current_time() - start == pytest.approx(120.0, abs=1.0)
        assert outcome.status == "paused"
        assert outcome.summary == "stopped by runtime: --max-runtime 2 min reached; the goal is resumable"
        assert [f.status for f in events if isinstance(f, GoalFinished)] == ["paused"]
        record = json.loads((first.store.dir / "goal.json").read_text())
        assert record["state"] == "paused" and record["reason"].startswith("stopped by runtime")
        text = summary_markdown(outcome, objective="ops", resume="reasonix goal --resume run-1")
        path = write_summary(first.store.dir, text)
        assert path.read_text().startswith("# Goal run-1: stopped by runtime\n")
        assert "- S1 Add calc/ops.py (interrupted; it runs again on resume)" in text
        assert "## Resume\n\n    reasonix goal --resume run-1\n" in text
        # Resumable: once DeepSeek answers again, the same run completes.
        first.store.close()
        resumed = resume_runner(
            workspace=ws,
            client=client,
            run_id="run-1",
            options=UNATTENDED,
            reviewer=None,
            on_event=events.append,
            config_dir=ws / ".no-user-config",
        )
        assert (await UnattendedRun(resumed).run()).status == "complete"


async def test_an_error_waiting_cannot_fix_ends_the_unattended_goal_failed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    refusing = script([reply(call("submit_plan", objective="ops", steps=PLAN))], [])
    refusing = refusing.model_copy(update={"reject_keys": ("test-key",)})  # the key the test's client sends
    events: list[object] = []
    async with goal_env(refusing) as (_emu, client):
        first = new_runner(client, ws, "ops", options=UNATTENDED, events=events)
        outcome = await UnattendedRun(first).run()
    assert outcome.status == "failed"
    assert outcome.summary.startswith("stopped by a DeepSeek API error") and "401" in outcome.summary
    assert not any(isinstance(e, GoalWaiting) for e in events)
    assert [e.status for e in events if isinstance(e, GoalFinished)] == ["failed"]


# ------------------------------------------------------------------------------------------------ stuck


async def test_a_stuck_step_is_replanned_once_then_the_goal_ends_blocked_with_the_evidence(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    bad = "def add(a, b):\n    return a - b\n"
    revised = reply(call("revise_plan", objective="ops", steps=[{**PLAN[0], "instructions": "Write add() carefully"}]))
    # Two failed attempts re-plan (as attended); the third same failure is "stuck": re-planned once more, with the
    # evidence, and the fourth ends the goal blocked.
    planner = [reply(call("submit_plan", objective="ops", steps=PLAN)), revised, revised]
    events: list[object] = []
    async with goal_env(script(planner, executor_step("S1", "calc/ops.py", bad) * 4)) as (_emu, client):
        first = new_runner(client, ws, "ops", options=UNATTENDED, events=events)
        with trio.fail_after(120):
            outcome = await UnattendedRun(first).run()
    assert outcome.status == "blocked", outcome.summary
    assert outcome.summary.startswith("the same failure")
    assert "AssertionError" in outcome.summary or "assert" in outcome.summary
    assert len([e for e in events if isinstance(e, PlanRevised)]) == 2
    assert outcome.record.stuck_replanned == ["S1"]
    told = (first.store.dir / "planner.jsonl").read_text()
    assert told.count("the same failure three times on S1") == 1  # the planner was given the evidence, once


async def test_attended_a_stuck_step_still_pauses(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    bad = "def add(a, b):\n    return a - b\n"
    revised = reply(call("revise_plan", objective="ops", steps=[{**PLAN[0], "instructions": "Write add() carefully"}]))
    planner = [reply(call("submit_plan", objective="ops", steps=PLAN)), revised]
    async with goal_env(script(planner, executor_step("S1", "calc/ops.py", bad) * 3)) as (_emu, client):
        outcome = await new_runner(client, ws, "ops").run()
    assert outcome.status == "paused" and outcome.record.stuck_replanned == []


# ------------------------------------------------------------------------------------------------ notify


async def test_notify_runs_the_command_with_the_outcome_in_its_environment(tmp_path: Path) -> None:
    out = tmp_path / "notified"
    env = {"REASONIX_STATUS": "complete", "REASONIX_RUN_ID": "run-9"}
    problem = await notify(f'echo "$REASONIX_RUN_ID $REASONIX_STATUS" > {out}', env=env, cwd=tmp_path)
    assert problem is None and out.read_text() == "run-9 complete\n"
    problem = await notify("echo nope >&2; exit 3", env={}, cwd=tmp_path)
    assert problem == "--notify-cmd exited with status 3: nope"


async def test_a_notify_command_that_hangs_is_stopped(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    """Here the clock must move while a real process runs: ``sleep 600`` never ends by itself."""
    problem = await notify("sleep 600", env={}, cwd=tmp_path)
    assert problem == "--notify-cmd did not finish within 60 s and was stopped"
