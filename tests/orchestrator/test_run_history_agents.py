"""What ``reasonix runs`` counts of a run's subagents: their journals in ``agents/`` (and a planner's in
``agents/planner/``) by profile, and nothing a repository's run directory links to elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.runs.history import session_costs


def _journal(path: Path, *costs: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {
            "t": "event",
            "event": {"kind": "usage", "usage": {"prompt_tokens": 100, "completion_tokens": 5}, "cost_usd": c},
        }
        for c in costs
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_subagent_journals_count_by_profile_and_a_turn_log_is_no_session(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _journal(run / "executor.jsonl", 0.5)
    (run / "turns.jsonl").write_text('{"number": 1, "text": "hi"}\n')
    _journal(run / "agents" / "re-viewer-0123456789ab.jsonl", 0.25)
    _journal(run / "agents" / "re-viewer-ba9876543210.2.jsonl", 0.125, 0.125)
    _journal(run / "agents" / "planner" / "re-viewer-0123456789ab.jsonl", 1.0)
    _journal(run / "agents" / "notes.jsonl", 9.0)  # not a subagent's name
    _journal(run / "agents" / "planner" / "deep" / "x-0123456789ab.jsonl", 9.0)  # no subagent journals there
    costs = session_costs(run)
    assert {name: (c.requests, c.cost_usd) for name, c in costs.items()} == {
        "executor": (1, 0.5),
        "agent:re-viewer": (3, 0.5),
        "agent:re-viewer@planner": (1, 1.0),
    }


def test_a_linked_agents_directory_is_not_walked(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _journal(elsewhere / "reviewer-0123456789ab.jsonl", 9.0)
    run = tmp_path / "run"
    _journal(run / "executor.jsonl", 0.5)
    (run / "agents").symlink_to(elsewhere)
    assert set(session_costs(run)) == {"executor"}
