"""The scenario library (``scenarios/library``): every file validates against the format, states what must hold,
and the library covers the behaviours issue 7 lists. Replaying each one is ``tests/scenarios/test_library.py``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scenarios.format import LoadedScenario, library_paths, load_scenario

PATHS = library_paths()
IDS = [p.stem if p.suffix == ".json" else p.name for p in PATHS]


def _all() -> list[LoadedScenario]:
    return [load_scenario(p) for p in PATHS]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_file_validates_and_states_what_must_hold(path: Path) -> None:
    loaded = load_scenario(path)
    sc = loaded.scenario
    assert sc.name == (path.stem if path.suffix == ".json" else path.name)
    exp = sc.expect
    assert exp.max_cost_usd is not None
    if sc.origin == "recorded":  # a real model's session (issue 44): replayed from its recorded replies
        assert sc.recorded, "a recorded scenario keeps its exchanges"
        assert exp.status is not None and (exp.commands or exp.files), "a recording says how it ends and what it leaves"
        return
    assert sc.origin == "scripted" and not sc.recorded
    keys = {s.key for s in sc.script.sessions}
    if sc.runs:  # several runs (issue 18): the last one says how it all ends and what must pass afterwards
        last = sc.runs[-1].expect
        assert last.status is not None and (last.commands or last.files), "the last run says how it ends"
        return
    if sc.command == "run":  # one executor session (issue 18's regression scenarios): a status and files, at least
        assert exp.status is not None and (exp.commands or exp.files), "a run says how it ends and what it leaves"
        assert keys == {"executor"}
        return
    assert exp.status is not None and exp.commands, "a scenario says how it ends and what must pass afterwards"
    # A cache guard for every session that is sent requests (a plan refused, or a verdict with no plan, never
    # reaches the executor: issue 44's evidence scenarios).
    used = {s.key for s in sc.script.sessions if s.replies} & {"planner", "executor"}
    assert used | {"overall"} <= set(exp.min_hit_ratio), "a cache guard for every session"
    assert {"planner", "executor"} <= keys
    assert loaded.workspace_files(), "a realistic small repository to work on"


def test_the_library_covers_every_behaviour_of_issue_7() -> None:
    scenarios = _all()
    assert len(scenarios) >= 12
    faults: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    for s in scenarios:
        faults.update(s.scenario.expect.faults)
        repairs.update(s.scenario.expect.repairs)
    assert {"http_429", "http_503", "drop", "truncate_arguments", "tool_call_in_reasoning"} <= set(faults)
    assert {"truncation", "scavenge", "storm", "unknown_tool"} <= set(repairs)
    by_name = {s.scenario.name: s.scenario for s in scenarios}
    assert by_name["verify-retry-replan"].expect.replans == 1
    assert any(a.decision == "revise" and a.feedback for a in by_name["review-revise"].review)
    assert by_name["budget-pause-resume"].resume is not None and by_name["budget-pause-resume"].settings.budget_usd
    long = by_name["long-session"]
    assert long.expect.min_requests["executor"] >= 150 and long.expect.compactions == 1
    assert any(s.system_contains == "You compress the history" for s in long.script.sessions)
    marker = {"planner-escalation": "planner", "executor-escalation": "executor", "flagship": "executor"}
    for name, session in marker.items():
        spec = next(s for s in by_name[name].script.sessions if s.key == session)
        assert any(r.content.startswith("<<<NEEDS_PRO") for r in spec.replies), name
        assert by_name[name].expect.escalations == 1


def test_the_flagship_is_a_four_step_diamond() -> None:
    flagship = load_scenario(next(p for p in PATHS if p.stem == "flagship")).scenario
    planner = next(s for s in flagship.script.sessions if s.key == "planner")
    (plan,) = [json.loads(c.raw_arguments()) for r in planner.replies for c in r.tool_calls if c.name == "submit_plan"]
    deps = {s["id"]: set(s["depends_on"]) for s in plan["steps"]}
    assert deps == {"S1": set(), "S2": {"S1"}, "S3": {"S1"}, "S4": {"S2", "S3"}}
    assert flagship.review == ()  # approved automatically in the demo, and the report says so
