"""What ``reasonix undo`` says and picks, on real files with real git: the messages the user reads when there is
nothing to undo, which steps a step id takes back, and the undo's own note (mutation testing,
bench/mutation_score.py, found these unpinned in orchestrator/checkpoints/undo.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.hook import StepCheckpoints
from orchestrator.checkpoints.ledger import Ledger
from orchestrator.checkpoints.undo import NothingToUndoError, apply_undo, new_undo_id, plan_undo
from tests.support.git_repo import user_git

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    user_git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("v1\n")
    return ws


async def three_steps(ws: Path, run_id: str = "r1") -> None:
    checkpoints = StepCheckpoints(ws, run_id)
    for n in (1, 2, 3):
        async with checkpoints.step(f"S{n}"):
            (ws / f"s{n}.py").write_text(f"step {n}\n")


async def test_an_empty_workspace_has_nothing_to_undo_and_says_how_checkpoints_come(ws: Path) -> None:
    with pytest.raises(NothingToUndoError) as raised:
        await plan_undo(ShadowRepo(ws))
    assert str(raised.value) == (
        "there are no checkpoints in this workspace yet: a turn that writes takes one, a goal one before each step"
    )


async def test_a_step_id_takes_back_that_step_and_every_later_one(ws: Path) -> None:
    await three_steps(ws)
    plan = await plan_undo(ShadowRepo(ws), step_id="S2")
    assert [sr.before.step_id for sr in plan.steps] == ["S2", "S3"]
    assert sorted(c.path for c in plan.restore) == ["s2.py", "s3.py"] and plan.conflicts == ()
    assert not plan.cut_off
    after = await apply_undo(ShadowRepo(ws), plan)
    assert after.note == "took back S2, S3 of r1"
    assert (ws / "s1.py").exists() and not (ws / "s2.py").exists() and not (ws / "s3.py").exists()
    latest = await plan_undo(ShadowRepo(ws))  # the latest run that is not an undo: r1, its last live step
    assert [sr.before.step_id for sr in latest.steps] == ["S1"]
    with pytest.raises(NothingToUndoError) as gone:
        await plan_undo(ShadowRepo(ws), step_id="S3")
    assert str(gone.value) == "run r1 has no step S3 left to undo; its steps: S1"


async def test_without_a_step_id_only_the_last_step_goes_back(ws: Path) -> None:
    await three_steps(ws)
    plan = await plan_undo(ShadowRepo(ws))
    assert [sr.before.step_id for sr in plan.steps] == ["S3"]
    assert [(c.status, c.path) for c in plan.restore] == [("A", "s3.py")]


async def test_what_is_already_undone_is_named_with_the_run_to_take_back_instead(ws: Path) -> None:
    await three_steps(ws, "r1")
    checkpoints = StepCheckpoints(ws, "r2")
    async with checkpoints.step("T1"):
        (ws / "t1.py").write_text("t\n")
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws)))
    with pytest.raises(NothingToUndoError) as raised:
        await plan_undo(ShadowRepo(ws))
    assert str(raised.value) == (
        "every step of the latest run r2 is already undone; take back the run before it with: reasonix undo --run r1"
    )
    with pytest.raises(NothingToUndoError) as run_done:
        await plan_undo(ShadowRepo(ws), run_id="r2")
    assert str(run_done.value) == "every step of run r2 is already undone"
    with pytest.raises(NothingToUndoError) as unknown:
        await plan_undo(ShadowRepo(ws), run_id="nope")
    assert str(unknown.value) == "run nope has no checkpoints (see them all with: reasonix checkpoints)"


async def test_the_only_run_undone_gives_no_hint(ws: Path) -> None:
    checkpoints = StepCheckpoints(ws, "r1")
    async with checkpoints.step("S1"):
        (ws / "a.py").write_text("a\n")
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws)))
    with pytest.raises(NothingToUndoError) as raised:
        await plan_undo(ShadowRepo(ws))
    assert str(raised.value) == "every step of the latest run r1 is already undone"


async def test_a_kept_hand_edit_is_named_in_the_undos_note(ws: Path) -> None:
    checkpoints = StepCheckpoints(ws, "r1")
    async with checkpoints.step("S1"):
        (ws / "app.py").write_text("agent\n")
        (ws / "b.py").write_text("agent\n")
    (ws / "app.py").write_text("hand\n")
    plan = await plan_undo(ShadowRepo(ws))
    after = await apply_undo(ShadowRepo(ws), plan)
    assert after.note == "took back S1 of r1; kept the hand-edited app.py"
    assert after.step_id == "undo" and after.kind == "after" and after.run_id.startswith("undo-")
    assert (ws / "app.py").read_text() == "hand\n" and not (ws / "b.py").exists()


def test_an_undo_id_is_dated_and_unique() -> None:
    first, second = new_undo_id(), new_undo_id()
    assert re.fullmatch(r"undo-\d{8}-\d{6}-[0-9a-f]{4}", first)
    assert first != second


async def test_the_steps_left_and_every_kept_file_are_listed_and_the_plan_holds_the_agents_and_the_current_tree(
    ws: Path,
) -> None:
    await three_steps(ws)
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws)))  # S3 back
    with pytest.raises(NothingToUndoError) as gone:
        await plan_undo(ShadowRepo(ws), step_id="S9")
    assert str(gone.value) == "run r1 has no step S9 left to undo; its steps: S1, S2"
    checkpoints = StepCheckpoints(ws, "r2")
    async with checkpoints.step("T1"):
        (ws / "s1.py").write_text("agent\n")
        (ws / "s2.py").write_text("agent\n")
    agent = await plan_undo(ShadowRepo(ws))
    assert agent.agent_tree == agent.now.tree  # nothing changed since the step: the agent's state is now's
    (ws / "s1.py").write_text("hand\n")
    (ws / "s2.py").write_text("hand\n")
    plan = await plan_undo(ShadowRepo(ws))
    assert plan.agent_tree == agent.agent_tree and plan.now.tree != plan.agent_tree
    after = await apply_undo(ShadowRepo(ws), plan)
    assert after.note == "took back T1 of r2; kept the hand-edited s1.py, s2.py"
    before = [cp for cp in Ledger(ws).read() if cp.run_id == after.run_id and cp.kind == "before"]
    assert [(cp.note, cp.tree) for cp in before] == [("the workspace before undoing", plan.now.tree)]


async def test_the_latest_run_is_the_one_checkpointed_last_and_the_hint_skips_runs_already_undone(ws: Path) -> None:
    for run_id in ("r3", "r2", "r1"):  # r1 is the latest, though its id sorts first
        async with StepCheckpoints(ws, run_id).step(f"{run_id}-S"):
            (ws / f"{run_id}.py").write_text("x\n")
    plan = await plan_undo(ShadowRepo(ws))
    assert plan.run_id == "r1"
    await apply_undo(ShadowRepo(ws), plan)
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws), run_id="r2"))
    with pytest.raises(NothingToUndoError) as raised:
        await plan_undo(ShadowRepo(ws))
    assert str(raised.value) == (
        "every step of the latest run r1 is already undone; take back the run before it with: reasonix undo --run r3"
    )
