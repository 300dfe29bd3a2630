"""``reasonix goal --output-format stream-json``: the events of a goal in the envelope of ``reasonix -p``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step
from ..run_support import ROOT, clean_env, emulator_process, emulator_stats, json_lines, reasonix

SCHEMA = json.loads((ROOT / "docs" / "stream-json.schema.json").read_text())


@pytest.mark.bwrap
def test_goal_stream_json_lines_follow_the_schema_and_end_with_the_result(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "calc").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "calc" / "__init__.py").write_text("")
    steps = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"])]
    script = {
        "sessions": [
            {
                "key": "planner",
                "system_contains": PLANNER,
                "replies": [
                    reply(call("submit_plan", objective="ops", steps=steps)),
                    reply(call("goal_verdict", verdict="complete", evidence=["verified"])),
                ],
            },
            {
                "key": "executor",
                "system_contains": EXECUTOR,
                "replies": executor_step("S1", "calc/ops.py", "def add(a, b):\n    return a + b\n"),
            },
        ]
    }
    env = clean_env(tmp_path)
    with emulator_process(script, tmp_path, env) as url:
        proc = reasonix(
            "goal", "ops", "--workspace", str(ws), "--base-url", url, "--yes", "--output-format", "stream-json", env=env
        )
        stats = emulator_stats(url)["total"]
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    for line in lines:
        jsonschema.validate(line, SCHEMA)
    goal_kinds = [x["message"] for x in lines if x.get("subtype") == "goal_event"]
    assert "plan_proposed" in goal_kinds and "goal_finished" in goal_kinds
    assert any(x["type"] == "assistant" for x in lines) and any(x["type"] == "user" for x in lines)
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success" and result["status"] == "complete"
    assert result["num_turns"] == stats["requests"] and result["usage"]["prompt_tokens"] == stats["prompt_tokens"]
    assert {x["session_id"] for x in lines} == {result["session_id"]}
