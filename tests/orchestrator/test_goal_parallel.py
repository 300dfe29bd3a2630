"""Parallel branches of a goal (issue 14 item 2): ready steps with disjoint declared writes run at once, each in a
fork of the executor in its own copy of the workspace, merged back at the join (real sessions against the emulator,
real files, real git)."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console

from orchestrator.branches import MergeOutcome
from orchestrator.events import BranchMerged, BranchRerun, StepStarted, WaveStarted
from orchestrator.goal.parallel.wave import not_merged, pick_wave
from orchestrator.goal.runner import GoalOptions
from orchestrator.runs.history import summarize
from orchestrator.ui.branch_lines import BranchBoard
from orchestrator.ui.goal_view import GoalTerminalUI
from plans.schema import Plan
from scenarios.emulator import RunningEmulator, Script
from scenarios.emulator.app import Response
from sessions.events import RequestStarted, ToolStarted, UsageReported

from .goal_support import call, dump, executor_step, goal_env, new_runner, reply
from .goal_support import step as step_spec
from .parallel_support import FILES, TEXT, diamond_script, step_of


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    ws.mkdir()
    (ws / "README.md").write_text("a diamond\n")
    return ws


def _record(emu: RunningEmulator, bodies: list[bytes]) -> None:
    """Every chat request body the emulator receives, in the order they arrive."""
    handle = emu.emulator.handle

    def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            bodies.append(body)
        return handle(method, path, headers, body)

    emu.emulator.handle = record  # type: ignore[method-assign]


async def _run(tmp_path: Path, sc: dict[str, Any], *, parallel: int = 3) -> tuple[Any, list[Any], list[bytes], Path]:
    ws = _workspace(tmp_path)
    events: list[Any] = []
    bodies: list[bytes] = []
    async with goal_env(Script.model_validate(sc)) as (emu, client):
        _record(emu, bodies)
        runner = new_runner(client, ws, "Diamond", events=events, options=GoalOptions(parallel=parallel))
        outcome = await runner.run()
    return outcome, events, bodies, ws


def _started(events: list[Any]) -> list[str]:
    return [e.step_id for e in events if isinstance(e, StepStarted)]


async def test_two_ready_steps_with_disjoint_writes_run_at_once_in_forks(tmp_path: Path) -> None:
    outcome, events, bodies, ws = await _run(tmp_path, diamond_script())
    assert outcome.status == "complete", outcome.summary
    for sid, path in FILES.items():
        assert (ws / path).read_text() == TEXT[sid]
    assert [e.step_ids for e in events if isinstance(e, WaveStarted)] == [("S1", "S2")]
    assert sorted(e.step_id for e in events if isinstance(e, BranchMerged)) == ["S1", "S2"]
    order = [step_of(b) for b in bodies if step_of(b) != "planner"]
    # Each step's turn is two requests. Both branches' first requests arrive before either branch's second: at once.
    assert order[:2] == ["S0", "S0"] and sorted(order[2:4]) == ["S1", "S2"] and order[-2:] == ["S3", "S3"]
    # Every event of a branch carries its step; the executor's own events carry none.
    fork_requests = [e for e in events if isinstance(e, RequestStarted) and e.step_id is not None]
    assert sorted(e.step_id for e in fork_requests) == ["S1", "S1", "S2", "S2"]
    json_requests = [e for e in dump(events) if e.get("kind") == "request_started"]
    assert [e.get("step_id") for e in json_requests if e["session"] == "executor"] == [
        None,
        None,
        *(e.step_id for e in fork_requests),
        None,
        None,
    ] or sorted(str(e.get("step_id")) for e in json_requests if e["session"] == "executor") == sorted(
        ["None"] * 4 + ["S1", "S1", "S2", "S2"]
    )
    assert all("step_id" not in e for e in json_requests if e["session"] == "planner")
    # The summary counts the forks' requests as the executor's.
    summary = outcome.to_summary()
    assert summary.sessions["executor"].requests == 8
    # ... and so does the run directory (``reasonix runs``, the service's run list), read back from the journals.
    on_disk = summarize(ws / ".reasonix" / "runs" / "run-1")
    assert on_disk is not None and on_disk.sessions["executor"].requests == 8
    assert on_disk.hit_ratio == pytest.approx(summary.cache_hit_ratio)
    assert on_disk.cost_usd == pytest.approx(summary.cost_usd)
    # The executor's log never saw the forks: its turns are S0 and S3 only.
    journal = ws / ".reasonix" / "runs" / "run-1" / "executor.jsonl"
    users = [
        json.loads(json.loads(line)["raw"])["content"]
        for line in journal.read_text().splitlines()
        if json.loads(line).get("t") == "msg" and '\\"role\\":\\"user\\"' in line
    ]
    assert ["## S0:" in users[0], "## S3:" in users[1], len(users)] == [True, True, 2]


async def test_every_forks_first_request_extends_the_executors_last_request(tmp_path: Path) -> None:
    outcome, events, bodies, _ws = await _run(tmp_path, diamond_script())
    assert outcome.status == "complete", outcome.summary
    steps = [step_of(b) for b in bodies]
    executor_last = bodies[max(i for i, s in enumerate(steps) if s == "S0")]
    for sid in ("S1", "S2"):
        first = bodies[steps.index(sid)]
        # The executor's last request, its closing "]}" left off, is where the fork's first request starts: the same
        # head, system message and messages, then the rest of the executor's log and the step's user message.
        assert first.startswith(executor_last[:-2])
        assert (
            json.loads(first)["messages"][: len(json.loads(executor_last)["messages"])]
            == json.loads(executor_last)["messages"]
        )
    fork_usage = [e for e in events if isinstance(e, UsageReported) and e.step_id is not None]
    firsts = {e.step_id: e for e in reversed(fork_usage)}
    for usage in firsts.values():
        assert usage.usage.prompt_cache_hit_tokens > 0 and usage.usage.prompt_cache_hit_tokens >= (
            usage.usage.prompt_tokens // 2
        )


async def test_parallel_one_runs_the_same_script_one_step_at_a_time(tmp_path: Path) -> None:
    outcome, events, bodies, ws = await _run(tmp_path, diamond_script(), parallel=1)
    assert outcome.status == "complete", outcome.summary
    assert not [e for e in events if isinstance(e, WaveStarted)]
    assert [step_of(b) for b in bodies if step_of(b) != "planner"] == ["S0", "S0", "S1", "S1", "S2", "S2", "S3", "S3"]
    assert all(getattr(e, "step_id", None) is None for e in events if isinstance(e, RequestStarted))
    assert not (ws / ".reasonix" / "runs" / "run-1" / "forks").exists()


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (["src/a.py"], ["src/b.py"], False),
        (["src/*.py"], ["src/b.py"], True),
        (["src/"], ["src/deep/b.py"], True),
        (["src/**/*.py"], ["src/x/*.py"], True),
        (["docs/*.md"], ["src/*.py"], False),
        ([], ["src/b.py"], True),  # a step that declares no writes never runs in parallel
    ],
)
def test_pick_wave_keeps_steps_apart_whose_writes_may_meet(a: list[str], b: list[str], overlap: bool) -> None:
    """Declared overlap: a valid plan orders such steps already (plans.graph refuses it otherwise); the wave checks
    again, conservatively, and a step that declares nothing is never in a wave."""
    steps = [
        {"id": "A", "title": "a", "instructions": "a", "writes": a},
        {"id": "B", "title": "b", "instructions": "b", "writes": b},
    ]
    plan = Plan.model_validate({"objective": "o", "steps": steps})
    assert pick_wave(plan, ["A", "B"], 3) == ([] if overlap else ["A", "B"])
    assert pick_wave(plan, ["A", "B"], 1) == []


def test_a_refused_merge_is_told_in_the_goals_words_around_the_outcomes_neutral_clauses() -> None:
    outcome = MergeOutcome(
        merged=False,
        conflicts=("a.py", "b.py"),
        why=("both changed the same lines", "a binary file changed on both sides"),
        undeclared=("c.txt",),
        declared=("a.py", "b.py"),
        reason="nothing in the workspace was changed: …",
    )
    assert not_merged("S4", outcome) == (
        "step S4 was not merged back and nothing in the workspace was changed: changed both in its copy and in the "
        "workspace since it began: a.py (both changed the same lines), b.py (a binary file changed on both sides). "
        "it wrote outside its declared files (a.py, b.py): c.txt; declare them in the step's writes, or run the "
        "step alone."
    )


async def test_a_branch_that_writes_outside_its_declared_files_runs_again_alone(tmp_path: Path) -> None:
    stray = [
        reply(
            call("write_file", path="left.py", content=TEXT["S1"]), call("write_file", path="stray.txt", content="x")
        ),
        reply(call("report_step", step_id="S1", status="done", summary="wrote left.py", evidence=[])),
        # alone, on the merged tree, in the executor: this time only its own file
        reply(call("write_file", path="left.py", content=TEXT["S1"])),
        reply(call("report_step", step_id="S1", status="done", summary="wrote left.py", evidence=[])),
    ]
    outcome, events, _bodies, ws = await _run(tmp_path, diamond_script(S1=stray))
    assert outcome.status == "complete", outcome.summary
    (rerun,) = [e for e in events if isinstance(e, BranchRerun)]
    assert rerun.step_id == "S1" and rerun.undeclared == ("stray.txt",)
    assert rerun.reason == (  # the goal's own words around the merge's (which name no step)
        "step S1 was not merged back and nothing in the workspace was changed: it wrote outside its declared files "
        "(left.py): stray.txt; declare them in the step's writes, or run the step alone."
    )
    assert [e.step_id for e in events if isinstance(e, BranchMerged)] == ["S2"]
    assert _started(events) in (["S0", "S1", "S2", "S1", "S3"], ["S0", "S2", "S1", "S1", "S3"])
    assert not (ws / "stray.txt").exists()  # nothing of the refused branch was applied
    # The rerun is the executor's own turn (no step id on its requests), after the wave.
    reruns = [e for e in events if isinstance(e, RequestStarted) and e.session == "executor"]
    assert [e.step_id for e in reruns][-4:] == [None, None, None, None]
    assert outcome.record.solo == []


async def test_a_merge_conflict_sends_the_step_back_to_run_alone_and_says_why(tmp_path: Path) -> None:
    twice = executor_step("S2", "right.py", TEXT["S2"]) * 2  # in its branch, then alone on the merged tree
    sc = diamond_script(S2=twice)
    outcome: Any = None
    events: list[Any] = []
    ws = _workspace(tmp_path)
    async with goal_env(Script.model_validate(sc)) as (emu, client):
        seen: list[str] = []

        def user_edits_during_the_wave(key: str) -> bool:
            seen.append(key)
            if key == "executor-S2" and seen.count(key) == 2:  # S2's branch is at work: the user edits its file
                (ws / "right.py").write_text("# the user's own right.py\n")
            return False

        emu.emulator.intercept = user_edits_during_the_wave
        runner = new_runner(client, ws, "Diamond", events=events, options=GoalOptions(parallel=3))
        outcome = await runner.run()
    (rerun,) = [e for e in events if isinstance(e, BranchRerun)]
    assert rerun.step_id == "S2" and rerun.conflicts == ("right.py",)
    assert rerun.reason == (
        "step S2 was not merged back and nothing in the workspace was changed: changed both in its copy and in the "
        "workspace since it began: right.py (both changed the same lines)."
    )
    assert [e.step_id for e in events if isinstance(e, BranchMerged)] == ["S1"]
    assert _started(events)[-2:] == ["S2", "S3"]  # S2 again, alone, then S3
    assert outcome is not None and outcome.status == "complete", outcome.summary
    assert (ws / "right.py").read_text() == TEXT["S2"]  # the rerun alone wrote over the user's edit, in the open


async def test_the_terminal_shows_branches_as_prefixed_lines_never_interleaved_streams(tmp_path: Path) -> None:
    out = io.StringIO()
    ui = GoalTerminalUI(Console(file=out, width=200, force_terminal=False), live=False, tick=False)
    sc = diamond_script(S1=[reply(call("write_file", path="left.py", content=TEXT["S1"]), content="LEFT-STREAM")])
    sc["sessions"][2]["replies"].append(
        reply(call("report_step", step_id="S1", status="done", summary="wrote left.py", evidence=[]))
    )
    ws = _workspace(tmp_path)
    async with goal_env(Script.model_validate(sc)) as (_emu, client):
        runner = new_runner(client, ws, "Diamond", options=GoalOptions(parallel=3))
        runner._on_event = ui  # the terminal display, as reasonix goal wires it
        outcome = await runner.run()
    assert outcome.status == "complete", outcome.summary
    text = out.getvalue()
    assert "⇉ 2 steps at once: S1, S2" in text
    assert "[S1] → write_file" in text and "[S2] → write_file" in text
    assert "✓ S1 merged (1 file)" in text and "✓ S2 merged (1 file)" in text
    assert "LEFT-STREAM" not in text  # a branch's streamed text is not written where another's could cut into it


def test_the_live_board_has_a_line_per_running_step() -> None:
    now = [100.0]
    board = BranchBoard(lambda: now[0])
    board.wave(WaveStarted(step_ids=("S1", "S2")), {"S1": "Add left.py", "S2": "Add right.py"})
    board.session_event(ToolStarted(session="executor", step_id="S1", call_id="c", name="bash", args_preview="make"))
    board.session_event(
        RequestStarted(
            session="executor",
            step_id="S2",
            request_index=1,
            model="m",
            body_bytes=1,
            prefix_fingerprint="f",
            messages=2,
        )
    )
    now[0] = 103.25
    lines = board.render().plain.splitlines()
    assert lines == ["◐ S1 Add left.py · bash make · 3.2s", "◐ S2 Add right.py · waiting for m · 3.2s"]
    board.joined(BranchMerged(step_id="S1", changed=("left.py",)))
    assert board.render().plain.splitlines() == ["◐ S2 Add right.py · waiting for m · 3.2s"]


@pytest.mark.parametrize(("text", "expected"), [("", 3), ("[goal]\nparallel = 1\n", 1), ("[goal]\nparallel = 4\n", 4)])
def test_parallel_comes_from_the_goal_section_of_the_config(tmp_path: Path, text: str, expected: int) -> None:
    from orchestrator.build import goal_options
    from orchestrator.config.model import load_config

    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "config.toml").write_text(text)  # the user's: an untrusted workspace may only lower it
    resolved = load_config(workspace=tmp_path, env={}, user_config_dir=tmp_path / "none")
    assert goal_options(resolved.config).parallel == expected


async def test_a_branch_imports_its_own_files_not_an_editable_install_of_the_live_workspace(tmp_path: Path) -> None:
    """The workspace's ``.venv`` (shared with the branches) has the project installed in editable mode: a ``.pth``
    pointing at the live ``src/``. A branch's verify command must import the package from the branch's files."""
    ws = _workspace(tmp_path)
    (ws / "src" / "calc").mkdir(parents=True)
    (ws / "src" / "calc" / "__init__.py").write_text("")
    (ws / ".gitignore").write_text(".venv/\n")
    await trio.run_process([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")])
    (site,) = (ws / ".venv" / "lib").glob("python3*/site-packages")
    (site / "__editable__calc.pth").write_text(f"{ws / 'src'}\n")  # what `pip install -e .` leaves behind
    files = {"S0": "src/calc/base.py", "S1": "src/calc/left.py", "S2": "src/calc/right.py", "S3": "src/calc/top.py"}
    deps = {"S0": [], "S1": ["S0"], "S2": ["S0"], "S3": ["S1", "S2"]}
    steps = [
        step_spec(
            sid,
            f"Add {path}",
            deps=deps[sid],
            writes=[path],
            verify=[f".venv/bin/python -c 'import calc.{Path(path).stem}'"],
        )
        for sid, path in files.items()
    ]
    sc = diamond_script(steps, **{sid: executor_step(sid, path, TEXT[sid]) for sid, path in files.items()})
    events: list[Any] = []
    async with goal_env(Script.model_validate(sc)) as (_emu, client):
        outcome = await new_runner(client, ws, "Diamond", events=events, options=GoalOptions(parallel=3)).run()
    assert outcome.status == "complete", outcome.summary
    assert [e.step_ids for e in events if isinstance(e, WaveStarted)] == [("S1", "S2")]
    assert not [e for e in events if isinstance(e, BranchRerun)]  # verified in their branches, first time
    assert [e.step_id for e in events if isinstance(e, StepStarted)].count("S1") == 1
