"""Turn checkpoints by what the turn did (issue 49), with the real tools dispatched as a session does, through the
conversation's gate, on real files with real git: a turn that only read stores nothing; a turn that wrote through
the file tools stores those files only (the store's index is not even read), each as it was just before the turn's
write, so a hand edit made before it survives an undo; a turn that ran a command stores the whole workspace before
that command, so what the command wrote is taken back too (and what a hook wrote, whatever the turn did); a first
store that takes long says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.checkpoints import turns as turns_module
from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.ledger import Ledger
from orchestrator.checkpoints.stage import index_stamp
from orchestrator.checkpoints.turn_calls import TurnGate
from orchestrator.checkpoints.turns import TurnCheckpoints, TurnRef
from orchestrator.checkpoints.undo import apply_undo, plan_undo
from scenarios.emulator import open_emulator
from sessions.tools import PreparedCall, ToolContext, dispatch
from sessions.tools.registry import default_registry
from tests.support.conversation import Recording, conversation, conversation_workspace, executor_script

pytestmark = pytest.mark.git


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    (ws / ".gitignore").write_text("build/\n")
    return ws


async def _turn(turns: TurnCheckpoints, number: int, *calls: tuple[str, dict[str, object]]) -> TurnRef | None:
    """One turn whose tool calls run as a session runs them, the gate telling the turn of each."""
    turn = turns.begin()
    ctx = ToolContext(root=turns.repo.workspace, gate=TurnGate(None, lambda: turn))
    prepared = [PreparedCall(id=f"c{i}", name=name, args=args) for i, (name, args) in enumerate(calls)]
    for result in await dispatch(default_registry(use_ripgrep=False), prepared, ctx, read_only=False):
        assert not result.is_error, result.content
    return await turns.finish(turn, run_id="conv", number=number, note=f"turn {number}")


def _objects(ws: Path) -> list[Path]:
    return sorted(p for p in (ShadowRepo(ws).git_dir / "objects").rglob("*") if p.is_file())


async def test_a_turn_that_only_reads_stores_nothing(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    reads = [("read_file", {"path": "a.txt"}), ("list_dir", {"path": "."}), ("grep", {"pattern": "a0"})]
    assert await _turn(turns, 1, *reads) is None
    assert not ShadowRepo(ws).store_dir.exists()  # not even the store was made: no snapshot
    assert await _turn(turns, 2, ("write_file", {"path": "a.txt", "content": "a2\n"})) is not None
    stored, stamp = _objects(ws), index_stamp(ShadowRepo(ws).index_file)
    assert await _turn(turns, 3, *reads) is None
    assert _objects(ws) == stored and index_stamp(ShadowRepo(ws).index_file) == stamp
    assert [cp.step_id for cp in Ledger(ws).read()] == ["turn-2", "turn-2"]


async def test_a_file_tool_turn_stores_its_files_only_each_as_the_turn_found_it(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    assert await _turn(turns, 1, ("write_file", {"path": "a.txt", "content": "a1\n"})) is not None
    (ws / "a.txt").write_text("a by hand\n")  # hand edits between the turns: one in the file turn 2 edits,
    (ws / "b.txt").write_text("b by hand\n")  # one in a file it never touches
    stamp = index_stamp(ShadowRepo(ws).index_file)
    edit = ("edit_file", {"path": "a.txt", "edits": [{"old": "by hand", "new": "by the agent"}]})
    made = ("write_file", {"path": "sub/new.txt", "content": "new\n"})
    ignored = ("write_file", {"path": "build/out.js", "content": "x\n"})
    assert await _turn(turns, 2, edit, made, ignored) is not None
    assert index_stamp(ShadowRepo(ws).index_file) == stamp  # the workspace was not walked: the index is untouched
    after = Ledger(ws).read()[-1]
    assert sorted((c.status, c.path) for c in after.changes) == [("A", "sub/new.txt"), ("M", "a.txt")]
    await apply_undo(turns.repo, await plan_undo(turns.repo))
    assert (ws / "a.txt").read_text() == "a by hand\n"  # as turn 2 found it, not as turn 1 left it
    assert (ws / "b.txt").read_text() == "b by hand\n"
    assert not (ws / "sub" / "new.txt").exists()
    assert (ws / "build" / "out.js").read_text() == "x\n"  # ignored: never stored, never taken back


async def test_what_a_command_wrote_is_taken_back_with_the_file_tools_writes(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    assert await _turn(turns, 1, ("write_file", {"path": "a.txt", "content": "a1\n"})) is not None
    (ws / "b.txt").write_text("b by hand\n")  # before the turn: kept by its undo
    calls = [
        ("write_file", {"path": "a.txt", "content": "a2\n"}),  # before the command: its own pre-state is kept
        ("bash", {"command": "echo c > c.txt && echo more >> b.txt && rm a.txt"}),
    ]
    ref = await _turn(turns, 2, *calls)
    assert ref is not None
    after = Ledger(ws).read()[-1]
    assert sorted((c.status, c.path) for c in after.changes) == [("A", "c.txt"), ("D", "a.txt"), ("M", "b.txt")]
    await apply_undo(turns.repo, await plan_undo(turns.repo))
    assert (ws / "a.txt").read_text() == "a1\n"
    assert (ws / "b.txt").read_text() == "b by hand\n"
    assert not (ws / "c.txt").exists()


async def test_a_write_through_a_file_tool_after_a_command_is_stored_as_well(ws: Path) -> None:
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    assert await _turn(turns, 1, ("write_file", {"path": "a.txt", "content": "a1\n"})) is not None
    calls = [("bash", {"command": "echo made > m.txt"}), ("write_file", {"path": "m.txt", "content": "tool\n"})]
    assert await _turn(turns, 2, *calls) is not None
    await apply_undo(turns.repo, await plan_undo(turns.repo))
    assert not (ws / "m.txt").exists()


async def test_a_store_that_takes_long_says_what_it_does_and_a_file_turn_after_it_stores_nothing_whole(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turns_module, "SLOW_STORE_S", 0)  # every whole store is "slow"; no real clock waited on
    said: list[str] = []
    turns = TurnCheckpoints(ws, notify=said.append)
    assert await _turn(turns, 1, ("write_file", {"path": "a.txt", "content": "a1\n"})) is not None
    assert any(text.startswith("storing the workspace so this turn can be undone") for text in said), said
    assert any(text.startswith("stored the workspace in ") for text in said), said
    said.clear()
    assert await _turn(turns, 2, ("write_file", {"path": "a.txt", "content": "a2\n"})) is not None
    assert said == []


HOOK_CONFIG = """
[[hooks]]
event = "Stop"
command = "echo hooked > by-hook.txt"
"""


async def test_what_a_hook_wrote_in_a_turn_that_only_talked_is_taken_back(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    (tmp_path / "cfg" / "reasonix").mkdir(parents=True)
    (tmp_path / "cfg" / "reasonix" / "config.toml").write_text(HOOK_CONFIG)
    async with open_emulator(script=executor_script([{"content": "Hi."}])) as emu:
        conv = conversation(ws, emu.base_url, Recording())
        async with conv.client:
            await conv.turn("hello")  # no tool call: without its hook this turn would store nothing
    assert (ws / "by-hook.txt").read_text() == "hooked\n"
    assert [(c.status, c.path) for c in Ledger(ws).read()[-1].changes] == [("A", "by-hook.txt")]
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws)))
    assert not (ws / "by-hook.txt").exists()
