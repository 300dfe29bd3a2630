"""Per-request expectations of a replay (issue 18): the model of request N, the cache growing request by request, a
maximum number of requests, events that must and must not happen, tool results matching a pattern, the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.replay.requests import RequestLog, RequestRecord, growth_failures
from orchestrator.replay.runner import replay
from scenarios.emulator import app

from .replay_support import three_step_scenario, write


def test_every_per_request_expectation_holds_for_the_unbroken_code(tmp_path: Path) -> None:
    data = three_step_scenario()
    data["expect"].update(
        request_models={"1": "flash", "executor:2": "deepseek-v4-flash"},
        cache_growth={"overall": []},
        max_requests={"overall": 40, "executor": 30},
        events={"step_verified": 3, "tool_finished": 1},
        no_events=["escalation", "compaction"],
        tool_results=[{"tool": "write_file", "pattern": r"calc/", "is_error": False, "session": "executor"}],
        text_pattern=".",
    )
    report = replay(write(tmp_path, data))
    assert report.ok, report.text_report()


def test_each_per_request_expectation_names_what_failed(tmp_path: Path) -> None:
    data = three_step_scenario()
    data["expect"].update(
        request_models={"2": "pro", "executor:99": "flash"},
        max_requests={"executor": 2},
        events={"escalation": 1},
        no_events=["step_verified"],
        tool_results=[{"tool": "write_file", "pattern": "no such text"}, {"tool": "fetch_url"}],
        text_pattern="^never$",
    )
    failures = replay(write(tmp_path, data)).failures
    joined = "\n".join(failures)
    assert "request 2: expected on pro, went to deepseek-v4-flash" in joined
    assert "executor request 99: expected on flash, but only" in joined
    assert "executor requests: expected at most 2, got" in joined
    assert "event escalation: expected at least 1, got 0" in joined
    assert "event step_verified: must not be emitted, got 3" in joined
    assert "tool write_file: no result matches /no such text/ (seen: 'created calc/" in joined
    assert "tool fetch_url: no result matches // (the tool never ran)" in joined
    assert "summary does not match /^never$/" in joined


def _one_byte_changed_in_the_middle_of_the_log(monkeypatch: pytest.MonkeyPatch, at_request: int) -> None:
    """A deliberately broken client: on one request a single byte of an early message differs from what it sent
    before (a re-serialized tool result, a trimmed space). The ratio guards barely notice; the growth check does."""
    original = app.Emulator._chat
    seen = {"executor": 0}

    def chat(self: app.Emulator, headers: Any, raw: bytes) -> Any:
        body = json.loads(raw)
        if body["messages"][0]["content"].startswith("You are the executor"):
            seen["executor"] += 1
            messages = body["messages"]
            if seen["executor"] == at_request and len(messages) > 4:
                middle = next(
                    m for m in messages[len(messages) // 2 :] if isinstance(m.get("content"), str) and m["content"]
                )
                middle["content"] = middle["content"][:-1] + ("x" if middle["content"][-1] != "x" else "y")
                raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return original(self, headers, raw)

    monkeypatch.setattr(app.Emulator, "_chat", chat)


def test_a_one_byte_change_in_the_middle_of_the_log_fails_the_growth_check_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = three_step_scenario()
    data["expect"]["cache_growth"] = {"executor": []}
    # A request here grows by about one default cache unit (128 tokens), and the request after the change still hits
    # the one before it in full: at 32-token units the loss past the change is several units, wherever they fall.
    data.setdefault("settings", {})["cache_unit"] = 32
    assert replay(write(tmp_path, data)).ok
    _one_byte_changed_in_the_middle_of_the_log(monkeypatch, at_request=3)
    report = replay(write(tmp_path, data))
    (failure,) = report.failures  # the hit-ratio floors of the scenario still hold
    assert failure.startswith("executor request 4 (deepseek-v4-flash) hit "), failure  # the request after the change
    assert "its previous request sent minus one cache unit" in failure


def test_growth_compares_within_one_model_and_allows_a_named_compaction() -> None:
    log = RequestLog()
    log.requests += [
        RequestRecord("executor", "flash", 1000, 0),
        RequestRecord("executor", "pro", 1200, 0),  # the first pro request: nothing to compare with
        RequestRecord("executor", "flash", 1500, 896),  # 896 >= 1000 - 128
        RequestRecord("executor", "flash", 2000, 0, estimated=True),  # usage never arrived: skipped
        RequestRecord("executor", "flash", 600, 0, after_compaction=True),
    ]
    assert growth_failures({"executor": ("compaction",)}, log, 128) == []
    (failure,) = growth_failures({"executor": ()}, log, 128)
    assert failure.startswith("executor request 5 (flash) hit 0 tokens, below the 1500") and "compaction" in failure


# ----------------------------------------------------------------------------------------------- several runs


def test_a_second_run_hits_from_its_first_request_and_a_stamped_prompt_fails_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scenarios.format import LIBRARY, load_scenario

    from .replay_support import clock_in_system_prompt_every_turn

    loaded = load_scenario(LIBRARY / "second-run-cache.json")
    report = replay(loaded)
    assert report.ok, report.text_report()
    assert report.requests == 4 and report.sessions["executor"].requests == 4  # both runs, one emulator
    clock_in_system_prompt_every_turn(monkeypatch)
    failures = replay(loaded).failures
    (failure,) = failures
    assert failure.startswith("run 2: executor first request hit ") and "expected at least 1024" in failure


def test_each_run_is_checked_right_after_it_against_what_it_did(tmp_path: Path) -> None:
    data = three_step_scenario()
    data["runs"] = [
        {
            "command": "run",
            "objective": "Say hello.",
            "expect": {"status": "done", "max_requests": {"overall": 1}, "files": {"calc/ops.py": "changed\n"}},
        }
    ]
    for session in data["script"]["sessions"]:
        if session["key"] == "executor":
            session["replies"].append({"content": "hello"})
    report = replay(write(tmp_path, data))
    # Run 1 holds; run 2 sent one request (its own count, not the whole replay's) and left calc/ops.py as run 1 did.
    assert [f.split("\n")[0] for f in report.failures] == ["run 2: file calc/ops.py differs:"], report.failures


def test_a_resume_that_reruns_a_verified_step_fails_the_kill_resume_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """kill-resume: run 1 is a real ``reasonix goal`` process, SIGKILLed as it asks about S2; run 2 resumes it. A
    deliberately broken resume that forgets which steps were verified re-runs S1 and is caught."""
    from orchestrator.goal import store
    from plans.schema import StepStatus
    from scenarios.format import LIBRARY, load_scenario

    loaded = load_scenario(LIBRARY / "kill-resume.json")
    report = replay(loaded)
    assert report.ok, report.text_report()
    original = store.RunStore.load

    def forgetful(self: store.RunStore) -> Any:
        record = original(self)
        if record.plan is not None:
            pending = tuple(s.model_copy(update={"status": StepStatus.PENDING}) for s in record.plan.steps)
            record.plan = record.plan.model_copy(update={"steps": pending})
        return record

    monkeypatch.setattr(store.RunStore, "load", forgetful)
    failures = replay(loaded).failures
    assert any("run 2:" in f and "ran out of replies for session 'executor'" in f for f in failures), failures


def test_kill_resume_holds_for_a_user_whose_state_home_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``XDG_STATE_HOME`` (most users), the killed run's private home once gave it a run key of its own: its
    run had no seal under the user's key and the resume was refused as forged (``reasonix replay kill-resume``)."""
    from scenarios.format import LIBRARY, load_scenario

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME")
    report = replay(load_scenario(LIBRARY / "kill-resume.json"))
    assert report.ok, report.text_report()
    assert (tmp_path / "home" / ".local" / "state" / "reasonix" / "run-key").is_file()


def test_a_killed_run_is_a_goal_and_cannot_be_a_resume(tmp_path: Path) -> None:
    from scenarios.format import ScenarioError, load_scenario

    data = three_step_scenario()
    data["runs"] = [{"command": "run", "kill_at_request": "3"}]
    with pytest.raises(ScenarioError, match="run 2: kill_at_request runs `reasonix goal`"):
        load_scenario(write(tmp_path, data).source)
    data["runs"] = [{"resume_previous": True, "kill_at_request": "executor:2"}]
    with pytest.raises(ScenarioError, match="cannot be killed"):
        load_scenario(write(tmp_path, data).source)
