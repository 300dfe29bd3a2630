"""Recording: ``reasonix run --record FILE`` against an emulator writes a replayable scenario without the key;
replaying it reproduces the run with no drift; a changed system prompt shows up as drift."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.executor_prompt import EXECUTOR_RUN_SYSTEM
from orchestrator.replay.drift import canonical_lines
from orchestrator.replay.recorder import CapturedExchange, derive_script, to_recorded
from orchestrator.replay.runner import replay
from scenarios.format import load_scenario

from .goal_support import call, reply
from .replay_support import OPS, WORKSPACE
from .run_support import clean_env, emulator_process, reasonix

SECRET = "sk-live-0123456789abcdef-never-in-a-file"
TASK = "Add calc/ops.py with add() so test_calc.py passes"
SCRIPT = {
    "sessions": [
        {
            "key": "executor",
            "replies": [
                reply(call("write_file", path="calc/ops.py", content=OPS), reasoning="Write the function."),
                reply(call("bash", command="python3 test_calc.py"), reasoning="Check it."),
                reply(content="Added calc/ops.py; test_calc.py prints ok."),
            ],
        }
    ]
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real ``reasonix run --record`` (a subprocess) against a ``reasonix emulate`` subprocess, with a key set."""
    tmp = tmp_path_factory.mktemp("record")
    ws = tmp / "proj"
    for rel, text in WORKSPACE.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    env = clean_env(tmp / "home")
    env["DEEPSEEK_API_KEY"] = SECRET
    out = tmp / "recorded.json"
    with emulator_process(SCRIPT, tmp, env) as url:
        done = reasonix("run", TASK, "--workspace", str(ws), "--base-url", url, "--record", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert "recorded 3 exchanges" in done.stderr
    assert (ws / "calc" / "ops.py").read_text() == OPS  # the live run really worked
    return out


def test_recording_never_holds_the_key(recorded: Path) -> None:
    text = recorded.read_text()
    assert SECRET not in text
    assert SECRET[3:20] not in text
    assert "authorization" not in text.lower() and "bearer" not in text.lower()


@pytest.mark.bwrap
def test_recording_holds_the_start_workspace_requests_replies_and_usage(recorded: Path) -> None:
    scenario = load_scenario(recorded).scenario
    assert scenario.origin == "recorded" and scenario.command == "run" and scenario.objective == TASK
    assert scenario.workspace == WORKSPACE  # as it was at the start: calc/ops.py did not exist yet
    assert [r.session for r in scenario.recorded] == ["executor"] * 3
    first = scenario.recorded[0]
    assert first.request["messages"][-1]["content"].endswith(TASK)
    assert first.reply["status"] == 200 and "data: [DONE]" in first.reply["body"]
    assert first.usage is not None and first.usage["prompt_tokens"] > 0
    assert scenario.recorded[2].request["messages"][-1]["content"].startswith("ok\n")  # the bash result went back
    assert scenario.expect.status == "done"
    replies = scenario.script.sessions[0].replies
    assert [c.name for r in replies for c in r.tool_calls] == ["write_file", "bash"]
    assert replies[2].content == "Added calc/ops.py; test_calc.py prints ok."


@pytest.mark.bwrap
def test_replaying_the_recording_reproduces_it_without_drift(recorded: Path) -> None:
    report = replay(load_scenario(recorded))
    assert report.ok, report.text_report()
    assert report.drift == () and report.status == "done" and report.requests == 3


def test_a_changed_system_prompt_is_reported_as_drift(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the executor conversation every `run` opens takes its prompt here (orchestrator.launch.open_conversation)
    monkeypatch.setattr(
        "orchestrator.conversation.engine.EXECUTOR_RUN_SYSTEM", EXECUTOR_RUN_SYSTEM + "\nAlways be terse."
    )
    report = replay(load_scenario(recorded))
    assert not report.ok
    assert len(report.drift) == 3  # every request carries the system prompt
    assert "executor request 1 drifted from the recording" in report.drift[0]
    assert "+  Always be terse." in report.drift[0]
    assert any("prompt drift" in f for f in report.failures)
    assert "≠ prompt drift" in report.text_report()


def test_failed_attempts_become_faults_of_the_next_reply() -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "system", "content": "You are X"}]}).encode()
    sse = (
        'data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    exchanges = [
        CapturedExchange(
            request=body, status=429, reply=bytearray(b'{"error":{"message":"slow down"}}'), complete=True
        ),
        CapturedExchange(request=body, status=200, reply=bytearray(sse.encode()[:40]), complete=False),
        CapturedExchange(request=body, status=200, reply=bytearray(sse.encode()), complete=True),
    ]
    script = derive_script(to_recorded(exchanges))
    (session,) = script.sessions
    assert session.catch_all and len(session.replies) == 1
    assert session.replies[0].content == "hi"
    assert [f.kind for f in session.replies[0].faults] == ["http_status", "drop"]


def test_canonical_lines_split_multiline_text() -> None:
    lines = canonical_lines({"b": 1, "a": [{"content": "x\ny"}]})
    assert lines == ["a[0].content = |", "  x", "  y", "b = 1"]


async def test_a_recorded_goal_replays_both_sessions_without_drift(tmp_path: Path) -> None:
    """The goal hook: record a goal (planner + executor, a person's review answer) against the emulator in-process,
    then replay the file: the same requests, byte for byte in canonical form, and the review answer kept."""
    from orchestrator.build import create_runner, goal_options
    from orchestrator.config.model import Config
    from orchestrator.replay.recorder import Recorder, settings_from_goal_options
    from orchestrator.replay.runner import replay_scenario
    from orchestrator.review.reviewer import ScriptedReviewer
    from scenarios.emulator import Script, open_emulator
    from sessions.wire.client import ClientSettings, DeepSeekClient

    from .replay_support import goal_scenario

    data = goal_scenario()
    ws = tmp_path / "proj"
    for rel, text in WORKSPACE.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    recorder = Recorder.start(ws)
    options = goal_options(Config())
    async with open_emulator(script=Script.model_validate(data["script"])) as emu:
        client = DeepSeekClient(
            base_url=emu.base_url, api_key=SECRET, settings=ClientSettings(), transport=recorder.transport()
        )
        async with client:
            reviewer = recorder.reviewer(ScriptedReviewer([{"kind": "approve"}]))
            runner = create_runner(
                workspace=ws,
                client=client,
                objective=data["objective"],
                options=options,
                reviewer=reviewer,
                config_dir=tmp_path / "no-config",
            )
            outcome = await runner.run("goal")
    assert outcome.status == "complete"
    out = tmp_path / "goal.json"
    recorder.write(
        out,
        command="goal",
        objective=data["objective"],
        status=outcome.status,
        settings=settings_from_goal_options(options),
    )
    assert SECRET not in out.read_text()
    loaded = load_scenario(out)
    assert [a.decision for a in loaded.scenario.review] == ["approve"]
    assert {s.key for s in loaded.scenario.script.sessions} == {"planner", "executor"}
    report = await replay_scenario(loaded)
    assert report.ok, report.text_report()
    assert report.drift == () and report.review == "scripted (1 answer)" and report.requests == 5
