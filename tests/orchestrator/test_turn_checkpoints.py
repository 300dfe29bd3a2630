"""Checkpoints of conversation turns on real files with real git: a turn that writes nothing records nothing, undo
takes back the last turn, and rewinding several turns puts each file back as the first turn that changed it found
it, so a hand edit made between turns survives and one made after the agent is a conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.ledger import Ledger
from orchestrator.checkpoints.turns import TurnCheckpoints, TurnRef, apply_rewind, plan_rewind
from orchestrator.checkpoints.undo import NothingToUndoError, apply_undo, plan_undo


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    return ws


async def _turn(turns: TurnCheckpoints, number: int, writes: dict[str, str]) -> TurnRef | None:
    before = await turns.before()
    for name, text in writes.items():
        (turns.repo.workspace / name).write_text(text)
    return await turns.after(before, run_id="conv", number=number, note=f"turn {number}")


async def test_a_turn_that_writes_nothing_records_nothing_and_undo_takes_back_the_last_turn(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    assert await _turn(turns, 1, {}) is None
    assert Ledger(ws).read() == []
    ref = await _turn(turns, 2, {"a.txt": "a2\n"})
    assert ref is not None and ref.step_id == "turn-2"
    assert await _turn(turns, 3, {}) is None
    assert [cp.kind for cp in Ledger(ws).read()] == ["before", "after"]
    plan = await plan_undo(ShadowRepo(ws))
    assert [sr.before.step_id for sr in plan.steps] == ["turn-2"]
    await apply_undo(ShadowRepo(ws), plan)
    assert (ws / "a.txt").read_text() == "a0\n"


async def test_rewinding_turns_keeps_a_hand_edit_made_between_them_and_asks_about_one_made_after(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    one = await _turn(turns, 1, {"a.txt": "a1\n"})
    (ws / "b.txt").write_text("b by hand\n")  # between the turns, in a file only turn 2 changes
    two = await _turn(turns, 2, {"b.txt": "b2\n", "c.txt": "c2\n"})
    (ws / "a.txt").write_text("a by hand\n")  # after the agent, in a file turn 1 changed
    assert one is not None and two is not None
    plan = await plan_rewind(turns.repo, [one, two])
    assert sorted(c.path for c in plan.restore) == ["a.txt", "b.txt", "c.txt"]
    assert plan.conflicts == ("a.txt",)
    await apply_rewind(turns.repo, plan)  # conflicts kept
    assert (ws / "a.txt").read_text() == "a by hand\n"
    assert (ws / "b.txt").read_text() == "b by hand\n"  # as turn 2 found it, not as it was before turn 1
    assert not (ws / "c.txt").exists()
    with pytest.raises(NothingToUndoError):
        await plan_rewind(turns.repo, [one, two])  # both are undone now
