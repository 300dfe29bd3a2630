"""The goal loop and its checkpoints: a checkpoint around every step, and a failed step's retry starts from the
step's checkpoint (real sessions against the emulator, real files, real git)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.checkpoints.hook import RESET_NOTE
from orchestrator.checkpoints.ledger import Ledger, step_runs
from orchestrator.events import StepVerified
from orchestrator.goal.runner import GoalOptions

from .goal_support import call, executor_step, goal_env, new_runner, reply, script, step

OPS = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b) ->\n"
HALF = "# a half-finished helper the first attempt left behind\n"

PLAN = [
    step(
        "S1",
        "Add calc/ops.py",
        writes=["calc/ops.py"],
        # Passes only when calc/ops.py is right AND the first attempt's half-edit is gone.
        verify=["test ! -e calc/half.py && python3 -c 'from calc.ops import add; assert add(2, 3) == 5'"],
    )
]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "notes.txt").write_text("the user's notes\n")
    return ws


def _scripts() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    planner = [
        reply(call("submit_plan", objective="ops", steps=PLAN)),
        reply(call("goal_verdict", verdict="complete", evidence=["add works"])),
        # only used when the retry fails too (no reset): a re-plan that gives up
        reply(call("goal_verdict", verdict="blocked", question="the half-edit is still there")),
    ]
    executor = [
        # attempt 1: a half-edit in a second file, a broken ops.py and the user's notes deleted
        reply(call("write_file", path="calc/half.py", content=HALF)),
        reply(call("bash", command="rm notes.txt")),
        *executor_step("S1", "calc/ops.py", BROKEN),
        # attempt 2 (the retry): only ops.py, done right
        *executor_step("S1", "calc/ops.py", OPS),
    ]
    return planner, executor


def _user_messages(journal: Path) -> list[str]:
    out = []
    for line in journal.read_text().splitlines():
        record = json.loads(line)
        if record.get("t") == "msg":
            message = json.loads(record["raw"])
            if message["role"] == "user":
                out.append(message["content"])
    return out


async def test_a_failed_steps_retry_starts_from_its_checkpoint(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    events: list[object] = []
    async with goal_env(script(*_scripts())) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events).run()
    assert outcome.status == "complete", outcome.summary
    assert [(e.step_id, e.ok) for e in events if isinstance(e, StepVerified)] == [("S1", False), ("S1", True)]
    assert not (ws / "calc" / "half.py").exists()  # the half-edit is gone
    assert (ws / "notes.txt").read_text() == "the user's notes\n"  # what the failed attempt deleted is back
    assert (ws / "calc" / "ops.py").read_text() == OPS
    # The executor was told, in the retry's message (and only there).
    messages = _user_messages(ws / ".reasonix" / "runs" / "run-1" / "executor.jsonl")
    assert [RESET_NOTE in m for m in messages] == [False, True]
    assert messages[1].endswith(RESET_NOTE)
    # The failed attempt is kept in a checkpoint of its own: nothing is lost.
    (run,) = step_runs(Ledger(ws).read(), "run-1")
    assert [cp.kind for cp in (run.before, *run.retries)] == ["before", "retry"]
    kept = {(c.status, c.path) for c in run.retries[0].changes}
    assert kept == {("A", "calc/half.py"), ("A", "calc/ops.py"), ("D", "notes.txt")}
    assert run.after is not None and {(c.status, c.path) for c in run.after.changes} == {("A", "calc/ops.py")}


async def test_without_retry_from_checkpoint_the_half_edit_stays(tmp_path: Path) -> None:
    """The control: with ``[goal] retry_from_checkpoint = false`` the retry starts from the failed attempt's files."""
    ws = _workspace(tmp_path)
    events: list[object] = []
    options = GoalOptions(retry_from_checkpoint=False, max_step_attempts=2)
    async with goal_env(script(*_scripts())) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events, options=options).run()
    assert outcome.status != "complete"
    assert (ws / "calc" / "half.py").read_text() == HALF
    messages = _user_messages(ws / ".reasonix" / "runs" / "run-1" / "executor.jsonl")
    assert not any(RESET_NOTE in m for m in messages)


@pytest.mark.parametrize("retry", [True, False])
def test_the_option_comes_from_the_goal_section_of_the_config(tmp_path: Path, retry: bool) -> None:
    from orchestrator.build import goal_options
    from orchestrator.config.model import load_config

    (tmp_path / "reasonix.toml").write_text(f"[goal]\nretry_from_checkpoint = {str(retry).lower()}\n")
    resolved = load_config(workspace=tmp_path, env={}, user_config_dir=tmp_path / "none")
    assert goal_options(resolved.config).retry_from_checkpoint is retry
