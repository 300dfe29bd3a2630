"""The goal loop's ends that used to crash or strand a run: a verdict in answer to review feedback, a DeepSeek API
error escaping a turn; a goal.json written before the plan held the step state; one summary shape for every command;
goal events told apart by type."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console

from orchestrator.build import resume_runner
from orchestrator.config.model import Config, ResolvedConfig
from orchestrator.conversation import task_summary
from orchestrator.events import GoalFinished, GoalStateChanged, StepStarted
from orchestrator.goal.runner import GoalOptions
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.review.reviewer import ReviewDecision, ScriptedReviewer
from orchestrator.ui.goal_view import GoalTerminalUI
from plans.schema import Plan, Step, StepStatus
from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.errors import DeepSeekError
from tests.support.tasks import task_conversation

from .goal_support import call, executor_step, goal_env, new_runner, reply, script, step
from .replay_support import goal_scenario, write

OPS = "def add(a, b):\n    return a + b\n"
CHECK = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"
PLAN = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK])]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    return ws


def _goal_json(ws: Path, run_id: str = "run-1") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ws / ".reasonix" / "runs" / run_id / "goal.json").read_text())
    return data


# ------------------------------------------------------------------------------------ a verdict at review


@pytest.mark.parametrize(
    ("verdict", "status", "reason"),
    [
        ({"verdict": "blocked", "question": "Which Python versions must calc support?"}, "blocked", "Which Python"),
        ({"verdict": "complete", "evidence": ["calc already adds"]}, "failed", "instead of a revised plan"),
    ],
)
async def test_a_verdict_in_answer_to_review_feedback_ends_the_goal_cleanly(
    tmp_path: Path, verdict: dict[str, Any], status: str, reason: str
) -> None:
    ws = _workspace(tmp_path)
    planner = [
        reply(call("submit_plan", objective="ops", steps=PLAN)),
        reply(call("goal_verdict", **verdict)),  # answers the feedback with a verdict, not revise_plan
    ]
    reviewer = ScriptedReviewer([{"kind": "revise", "feedback": "also support Python 2"}])
    events: list[object] = []
    async with goal_env(script(planner, [])) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", reviewer=reviewer, events=events).run()
    assert outcome.status == status and reason in outcome.summary
    assert _goal_json(ws)["state"] == status
    assert not any(isinstance(e, StepStarted) for e in events)  # nothing was executed
    assert not (ws / "calc" / "ops.py").exists()
    (finished,) = [e for e in events if isinstance(e, GoalFinished)]
    assert finished.status == status


# ------------------------------------------------------------------------------------ DeepSeek API errors


async def test_a_server_error_retried_out_pauses_the_goal_and_it_resumes(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    failing = reply(
        call("submit_plan", objective="ops", steps=PLAN), faults=[{"kind": "http_status", "status": 500, "times": 4}]
    )
    planner = [failing, reply(call("goal_verdict", verdict="complete", evidence=["ok"]))]
    events: list[object] = []
    async with goal_env(script(planner, executor_step("S1", "calc/ops.py", OPS))) as (_emu, client):
        with pytest.raises(DeepSeekError):  # bare, not in an exception group: the CLI says it in one message
            await new_runner(client, ws, "ops", events=events).run()
        record = _goal_json(ws)
        assert record["state"] == "paused" and "DeepSeek API error" in record["reason"], record
        (finished,) = [e for e in events if isinstance(e, GoalFinished)]
        assert finished.status == "paused" and finished.resume_hint == "reasonix goal --resume run-1"
        resumed = resume_runner(
            workspace=ws,
            client=client,
            run_id="run-1",
            options=GoalOptions(),
            reviewer=None,
            config_dir=ws / ".no-user-config",
        )
        outcome = await resumed.run()
    assert outcome.status == "complete", outcome.summary
    assert (ws / "calc" / "ops.py").read_text() == OPS


async def test_an_unreachable_host_pauses_the_goal(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ClientSettings(max_attempts=1, backoff_initial_s=0, backoff_jitter_s=0)
    client = DeepSeekClient(base_url=f"http://127.0.0.1:{port}", api_key="k", settings=settings)
    events: list[object] = []
    async with client:
        with pytest.raises(DeepSeekError) as raised:
            await new_runner(client, ws, "ops", events=events).run()
    assert _goal_json(ws)["state"] == "paused"
    assert [e.status for e in events if isinstance(e, GoalFinished)] == ["paused"]
    assert "could not reach DeepSeek" in str(raised.value)
    assert "could not reach DeepSeek" in _goal_json(ws)["reason"]


# ------------------------------------------------------------------------------------ goal.json


def _plan() -> Plan:
    return Plan(
        objective="ops",
        steps=(
            Step(id="S1", title="a", instructions="do a"),
            Step(id="S2", title="b", instructions="do b", depends_on=("S1",)),
        ),
    )


def test_the_plan_holds_the_step_state_and_round_trips(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, "r1")
    plan = _plan().with_statuses({"S1": StepStatus.DONE})
    record = GoalRecord(run_id="r1", objective="ops", plan=plan, attempts={"S2": 1})
    store.save(record)
    loaded = store.load()
    assert loaded == record and loaded.verified == ["S1"] and loaded.plan_revision == 1
    data = _goal_json(tmp_path, "r1")
    assert not {"verified", "statuses", "results", "evidence", "plan_revision"} & set(data)


def test_an_old_goal_json_with_per_step_maps_is_migrated_on_load(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, "old")
    store.save_plan(_plan())
    old = {
        "run_id": "old",
        "objective": "ops",
        "state": "paused",
        "plan_revision": 1,
        "verified": ["S1"],
        "attempts": {"S1": 1, "S2": 2},
        "statuses": {"S1": "done", "S2": "running"},
        "results": {"S1": "wrote a"},
        "evidence": {"S1": ["a.py"]},
        "current_step": "S2",
    }
    (store.dir / "goal.json").write_text(json.dumps(old))
    record = store.load()
    assert record.plan is not None and record.plan_revision == 1 and record.verified == ["S1"]
    s1, s2 = record.plan.steps
    assert (s1.status, s1.result, s1.evidence) == (StepStatus.DONE, "wrote a", ("a.py",))
    assert s2.status is StepStatus.RUNNING and record.attempts == {"S1": 1, "S2": 2} and record.current_step == "S2"


# ------------------------------------------------------------------------------------ summaries and events


async def test_run_goal_and_replay_print_one_summary_shape(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    resolved = ResolvedConfig(config=Config(base_url="http://127.0.0.1:9"), api_key="k", sources={})
    run = task_conversation(resolved, ws, memory_config_dir=tmp_path / "none")
    run_json = task_summary(run, "cancelled").model_dump(mode="json")

    goal_ws = _workspace(tmp_path)
    planner = [reply(call("submit_plan", objective="ops", steps=PLAN))]
    planner += [reply(call("goal_verdict", verdict="complete", evidence=["ok"]))]
    async with goal_env(script(planner, executor_step("S1", "calc/ops.py", OPS))) as (_emu, client):
        outcome = await new_runner(client, goal_ws, "ops").run()
    goal_json = outcome.to_summary().model_dump(mode="json")

    from orchestrator.replay.runner import replay_scenario

    report = await replay_scenario(write(tmp_path, goal_scenario()))
    replay_json = report.summary()

    assert set(run_json) == set(goal_json) == set(replay_json)
    assert [s["command"] for s in (run_json, goal_json, replay_json)] == ["run", "goal", "replay"]
    for summary in (run_json, goal_json, replay_json):
        assert summary["kind"] == "summary" and summary["schema_version"] == 1 and "hit_ratio" not in summary
    assert goal_json["status"] == "complete" and goal_json["steps_done"] == 1 and goal_json["ok"] is True
    assert 0 < goal_json["cache_hit_ratio"] < 1 and set(goal_json["sessions"]) == {"planner", "executor"}
    assert goal_json["sessions"]["executor"]["cache_hit_ratio"] is not None
    assert replay_json["replay"]["scenario"] == "tiny-goal" and replay_json["ok"] is True
    assert run_json["cache_hit_ratio"] is None and run_json["model"] == "deepseek-v4-flash"


class _Announced(GoalStateChanged):
    """A goal event declared outside orchestrator.events: still a goal event."""


def test_goal_events_are_told_apart_by_type() -> None:
    out = io.StringIO()
    ui = GoalTerminalUI(Console(file=out, width=100), live=False)
    ui(_Announced(state="executing", previous="planning", reason="go"))
    assert "» executing: go" in out.getvalue()


# ------------------------------------------------------------------------------------ paused at the review


class _InterruptedReviewer:
    """The user presses Ctrl-C while the plan waits for review: the review is cancelled from outside."""

    def __init__(self, scope: trio.CancelScope) -> None:
        self.scope = scope

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        self.scope.cancel()
        await trio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_goal_paused_at_its_review_is_reviewed_again_on_resume_never_executed_unreviewed(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    planner = [
        reply(call("submit_plan", objective="ops", steps=PLAN)),
        reply(call("goal_verdict", verdict="complete", evidence=["ok"])),
    ]
    async with goal_env(script(planner, executor_step("S1", "calc/ops.py", OPS))) as (emu, client):
        with trio.CancelScope() as scope:
            await new_runner(client, ws, "ops", reviewer=_InterruptedReviewer(scope)).run()
        record = _goal_json(ws)
        assert record["state"] == "paused" and record["approved"] is False, record
        before = emu.stats()["sessions"]
        reviewer = ScriptedReviewer([ReviewDecision(kind="cancel")])
        resumed = resume_runner(
            workspace=ws,
            client=client,
            run_id="run-1",
            options=GoalOptions(parallel=1),
            reviewer=reviewer,
            config_dir=ws / ".no-user-config",
        )
        outcome = await resumed.run()
        assert emu.stats()["sessions"] == before and "executor" not in before
    assert len(reviewer.seen) == 1  # the plan was shown for review again ...
    assert outcome.status == "cancelled"  # ... and the user's "no" is honoured: nothing ran
    assert not (ws / "calc" / "ops.py").exists()
