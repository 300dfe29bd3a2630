"""``reasonix replay``: the real orchestrator against the in-process emulator, expectations checked, a report."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from orchestrator.checkpoints.git import STORES_DIR, state_home
from orchestrator.cli.main import main
from orchestrator.replay.runner import peak_clock, replay

from .goal_support import EXECUTOR, PLANNER, call, reply
from .replay_support import (
    OPS,
    PLAN,
    WORKSPACE,
    clock_in_system_prompt_every_turn,
    goal_scenario,
    three_step_scenario,
    write,
)


def test_a_goal_replays_and_every_expectation_holds(tmp_path: Path) -> None:
    report = replay(write(tmp_path, goal_scenario()))
    assert report.ok, report.text_report()
    assert (report.status, report.steps_done, report.steps_total, report.escalations) == ("complete", 1, 1, 0)
    assert report.review == "automatic" and "review: automatic" in report.text_report()
    assert set(report.sessions) == {"planner", "executor"}
    assert report.requests == 5 == sum(s.requests for s in report.sessions.values())
    assert report.cost_usd > 0 and report.cache_hit_ratio is not None and 0 < report.cache_hit_ratio < 1
    assert all(s.efficiency is not None and s.efficiency > 0.9 for s in report.sessions.values())
    assert report.workspace is None


def test_a_replay_leaves_no_checkpoint_store_behind(tmp_path: Path) -> None:
    """The temporary copy is removed, and so is its checkpoint store in the state home (a newcomer's every replay
    would otherwise leave one there); ``--keep`` keeps both."""
    stores = state_home(os.environ) / STORES_DIR
    kept = replay(write(tmp_path, goal_scenario()), keep=True)
    assert kept.workspace is not None
    [store] = [p for p in stores.iterdir() if (p / "workspace").read_text().strip() == kept.workspace]
    report = replay(write(tmp_path, goal_scenario()))
    assert report.ok and report.workspace is None
    assert [p.name for p in stores.iterdir()] == [store.name]  # only the kept one


def test_failed_expectations_are_each_reported_with_a_diff(tmp_path: Path) -> None:
    wrong = "def add(a, b):\n    return a + b + 0\n"
    data = goal_scenario(
        expect={
            "status": "blocked",
            "files": {"calc/ops.py": wrong, "calc/missing.py": "x\n"},
            "file_patterns": {"README.md": r"calculator\s+library"},
            "absent": ["calc/ops.py"],
            "commands": ["python3 test_calc.py", "echo broken >&2; exit 3"],
            "escalations": 2,
            "max_cost_usd": 0.000001,
            "min_requests": {"executor": 50},
        }
    )
    report = replay(write(tmp_path, data))
    assert not report.ok
    failures = "\n".join(report.failures)
    assert "status: expected blocked, got complete" in failures
    assert "--- expected/calc/ops.py\n+++ workspace/calc/ops.py" in failures
    assert "-    return a + b + 0\n+    return a + b\n" in failures
    assert "file calc/missing.py: missing" in failures
    assert "file README.md does not match /calculator\\s+library/" in failures
    assert "file calc/ops.py: should be absent, but exists" in failures
    assert "command failed (exit 3): echo broken >&2; exit 3\nbroken" in failures
    assert "python3 test_calc.py" not in failures  # that command passes
    assert "escalations: expected 2, got 0" in failures
    assert "cost $" in failures and "> $0.0000" in failures
    assert "executor requests: expected at least 50, got 2" in failures
    text = report.text_report()
    assert text.startswith("FAILED · tiny-goal") and "  ✗ status: expected blocked, got complete" in text


def test_plan_mode_with_scripted_review_answers(tmp_path: Path) -> None:
    revised = [{**PLAN[0], "title": "Add calc/ops.py with add() and a docstring"}]
    planner = [
        reply(call("submit_plan", objective="Make test_calc.py pass", steps=PLAN)),
        reply(call("revise_plan", objective="Make test_calc.py pass", steps=revised)),
    ]
    data = goal_scenario(
        command="plan",
        script={"sessions": [{"key": "planner", "system_contains": PLANNER, "replies": planner}]},
        review=[{"decision": "revise", "feedback": "mention the docstring"}, {"decision": "approve"}],
        expect={"status": "paused", "absent": ["calc/ops.py"], "steps_done": 0},
    )
    report = replay(write(tmp_path, data))
    assert report.ok, report.text_report()
    assert report.review == "scripted (2 answers)" and "review: scripted (2 answers)" in report.text_report()
    assert set(report.sessions) == {"planner"}


def test_a_paused_goal_is_resumed_with_the_raised_budget(tmp_path: Path) -> None:
    data = three_step_scenario(
        settings={"max_requests": 5},
        resume={"max_requests": 100},
    )
    report = replay(write(tmp_path, data))
    assert report.ok, report.text_report()
    assert report.status == "complete" and report.requests == 8  # both runs counted
    # The resumed sessions continue their conversations: the executor's requests are numbered on across the runs.
    assert report.sessions["executor"].requests == 6

    never_pauses = three_step_scenario(resume={"max_requests": 100})
    report = replay(write(tmp_path, never_pauses, "b.json"))
    assert not report.ok
    assert "resume: expected the first run to pause, but it ended complete" in report.failures


def test_a_run_scenario_is_one_executor_session(tmp_path: Path) -> None:
    data = goal_scenario(
        command="run",
        objective="Add calc/ops.py with add()",
        script={
            "sessions": [
                {
                    "key": "executor",
                    "system_contains": EXECUTOR,
                    "replies": [reply(call("write_file", path="calc/ops.py", content=OPS)), reply(content="Done.")],
                }
            ]
        },
        expect={"status": "done", "files": {"calc/ops.py": OPS}, "commands": ["python3 test_calc.py"]},
    )
    report = replay(write(tmp_path, data))
    assert report.ok, report.text_report()
    assert report.review == "none" and report.steps_total is None and set(report.sessions) == {"executor"}
    assert report.text == "Done."


def test_a_script_that_runs_out_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    data = goal_scenario()
    data["script"]["sessions"][1]["replies"] = data["script"]["sessions"][1]["replies"][:1]
    report = replay(write(tmp_path, data))
    assert not report.ok and report.error is not None
    assert "ran out of replies for session 'executor'" in report.error


# ------------------------------------------------------------------------------------------- the cache guard


def test_the_cache_guard_holds_for_the_unbroken_code(tmp_path: Path) -> None:
    report = replay(write(tmp_path, three_step_scenario()))
    assert report.ok, report.text_report()
    assert (
        report.sessions["executor"].cache_hit_ratio is not None and report.sessions["executor"].cache_hit_ratio > 0.75
    )


def test_the_guard_after_the_first_request_leaves_each_first_request_out(tmp_path: Path) -> None:
    data = three_step_scenario()
    data["expect"]["min_hit_ratio_after_first"] = {"executor": 0.999, "planner": 0.5}
    report = replay(write(tmp_path, data))
    executor, planner = report.sessions["executor"], report.sessions["planner"]
    assert executor.cache_hit_ratio is not None and executor.cache_hit_ratio_after_first is not None
    # The first request missed the whole prefix; without it the ratio is the steady state of the conversation.
    assert executor.cache_hit_ratio < 0.9 < executor.cache_hit_ratio_after_first < 0.999
    assert planner.cache_hit_ratio_after_first is not None and planner.cache_hit_ratio_after_first > 0.5
    (failure,) = report.failures
    shown = f"{executor.cache_hit_ratio_after_first:.1%}"
    assert failure.startswith(f"executor hit ratio after the first request {shown} < 99.9%"), failure
    assert "after the first request)" in report.text_report()


def test_a_timestamp_in_the_prompt_fails_the_cache_guard_naming_the_prefix_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock_in_system_prompt_every_turn(monkeypatch)
    report = replay(write(tmp_path, three_step_scenario()))
    assert not report.ok
    guard = [f for f in report.failures if "hit ratio" in f]
    executor = next(f for f in guard if f.startswith("executor hit ratio"))
    # Turns 2 and 3 of the executor start at requests 3 and 5: each rebuilt the prefix.
    assert executor.endswith("< 75.0%: requests 3, 5: prefix changed (system prompt or tool schemas)"), executor
    overall = next(f for f in guard if f.startswith("overall hit ratio"))
    assert "executor 3, executor 5, planner 2: prefix changed (system prompt or tool schemas)" in overall


def test_the_timestamp_also_fails_a_library_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarios.format import library_paths, load_scenario

    guarded = [p for p in library_paths() if load_scenario(p).scenario.expect.min_hit_ratio]
    assert guarded, "every library scenario declares a hit-ratio floor (tests/scenarios/test_scenario_files.py)"
    loaded = load_scenario(next((p for p in guarded if p.stem == "flagship"), guarded[0]))
    assert replay(loaded).ok
    clock_in_system_prompt_every_turn(monkeypatch)
    report = replay(loaded)
    assert any("hit ratio" in f and "prefix changed" in f for f in report.failures), report.text_report()


# ---------------------------------------------------------------------------------------------------- the CLI


def test_cli_json_keep_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(goal_scenario()))
    assert main(["replay", str(good), "--json", "--keep"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    summary = json.loads(line)
    assert summary["kind"] == "summary" and summary["command"] == "replay" and summary["schema_version"] == 1
    for key in ("ok", "status", "requests", "cache_hit_ratio", "cost_usd", "escalations", "sessions"):
        assert key in summary
    details = summary["replay"]
    assert summary["ok"] is True and details["scenario"] == "tiny-goal" and details["failures"] == []
    kept = Path(details["workspace"])
    assert (kept / "calc" / "ops.py").read_text() == OPS
    assert set(WORKSPACE) <= {p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file()}

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(goal_scenario(expect={"files": {"calc/ops.py": "nope\n"}})))
    assert main(["replay", str(bad), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "FAILED · tiny-goal" in out and "✗ file calc/ops.py differs:" in out and "+++ workspace/calc/ops.py" in out

    assert main(["replay", "no-such-scenario"]) == 2
    assert "no scenario 'no-such-scenario'" in capsys.readouterr().err


def test_cli_live_view_shows_the_goal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(goal_scenario()))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "scripted replies, not a model" in out
    assert "review: approve (automatic)" in out and "✓ S1 verified" in out
    assert out.rstrip().splitlines()[0].startswith("▶ tiny-goal")
    # a plan's wave runs one step after the other in a scenario: the header says why (issue 23 item 32)
    assert "one step at a time: [goal] parallel = 1)" in out.splitlines()[0]


def test_peak_clock_is_a_weekday_morning() -> None:
    at = peak_clock(datetime(2026, 11, 8).date())()  # a Sunday
    assert (at.weekday(), at.hour, at.day) == (4, 7, 6)


def test_cli_list_names_every_library_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    from scenarios.format import library_paths

    assert main(["replay", "--list"]) == 0
    out = capsys.readouterr().out
    names = [p.name.removesuffix(".json") for p in library_paths()]
    assert len(names) >= 12 and all(name in out for name in names)
    assert "scripted" in out and "reasonix replay NAME" in out
