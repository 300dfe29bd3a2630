"""A writing subagent stopped while it works goes on, when its parent is resumed, in the copy of the workspace it had
written to: what it wrote before the stop is merged back with the rest. A copy that is gone is made anew, and the
subagent is told that its earlier changes are not there."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from orchestrator.build import build_executor
from orchestrator.config.model import load_config
from scenarios.emulator import Script, open_emulator
from scenarios.emulator.app import Response
from sessions.wire.client import ClientSettings, DeepSeekClient
from tests.support.subagents import subagent_workspace

FIXER = "---\ndescription: Fixes one file\nread_only: false\n---\nFIXER-MARK. You fix what the task names.\n"
CALL = {"name": "task", "arguments": {"agent": "fixer", "task": "TASK-A: set x_a"}}
WRITE = {"name": "write_file", "arguments": {"path": "a.py", "content": "x_a = 2\n"}}


def _script() -> Script:
    parent = {"key": "executor", "replies": [{"tool_calls": [CALL]}, {"tool_calls": [CALL]}, {"content": "Fixed."}]}
    fixer = {
        "key": "fixer",
        "system_contains": "FIXER-MARK",
        "replies": [
            {"tool_calls": [WRITE]},
            {"content": "never read: the parent is stopped while this reply comes"},
            {"content": "REPORT-A: a.py now reads x_a = 2."},
        ],
    }
    return Script.model_validate({"sessions": [parent, fixer]})


def _fixer_requests(bodies: list[bytes]) -> list[dict[str, Any]]:
    return [b for b in map(json.loads, bodies) if "FIXER-MARK" in b["messages"][0]["content"]]


async def _stop_then_resume(tmp_path: Path, between: Any = None) -> tuple[Path, list[bytes], str]:
    ws = subagent_workspace(tmp_path, profile=False)
    (ws / ".reasonix" / "agents").mkdir(parents=True)
    (ws / ".reasonix" / "agents" / "fixer.md").write_text(FIXER)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    resolved = load_config(workspace=ws, env=env)
    journal = ws / ".reasonix" / "runs" / "r1" / "executor.jsonl"
    bodies: list[bytes] = []
    async with open_emulator(script=_script()) as emu:
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            scope = trio.CancelScope()
            handle = emu.emulator.handle

            def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
                if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
                    bodies.append(body)
                    if len(_fixer_requests(bodies)) == 2 and not scope.cancel_called:
                        scope.cancel()  # the fixer has written a.py in its copy and asks for its next reply
                return handle(method, path, headers, body)

            emu.emulator.handle = record  # type: ignore[method-assign]
            cfg = tmp_path / "cfg"
            with scope:
                await build_executor(resolved, ws, client, journal_path=journal, memory_config_dir=cfg).send("Fix a")
            assert scope.cancelled_caught
            assert (ws / "a.py").read_text() == "x_a = 1\n"  # not merged: the fixer had not finished
            if between is not None:
                between(ws)
            resumed = build_executor(resolved, ws, client, journal_path=journal, memory_config_dir=cfg, resume=True)
            result = await resumed.send("go on")
    assert result.status == "done" and result.text == "Fixed.", result
    report = [m["content"] for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool"][-1]
    return ws, bodies, report


async def test_a_resumed_writing_subagent_goes_on_in_its_copy_and_what_it_wrote_before_merges_back(
    tmp_path: Path,
) -> None:
    ws, bodies, report = await _stop_then_resume(tmp_path)
    assert (ws / "a.py").read_text() == "x_a = 2\n", report
    assert report.endswith("Its changes are merged into your workspace: a.py."), report
    fixer = _fixer_requests(bodies)
    assert len(fixer) == 3  # its first request, the one the stop cut, and that one again after the resume
    assert "was lost" not in json.dumps(fixer[-1]["messages"])
    branches = ws / ".reasonix" / "runs" / "r1" / "branches"
    assert not any(branches.iterdir())  # the copy and its state are gone once merged


async def test_a_resumed_writing_subagent_whose_copy_is_gone_is_told_so(tmp_path: Path) -> None:
    def lose(ws: Path) -> None:
        shutil.rmtree(ws / ".reasonix" / "runs" / "r1" / "branches")

    ws, bodies, report = await _stop_then_resume(tmp_path, lose)
    last = _fixer_requests(bodies)[-1]["messages"]
    said = [m["content"] for m in last if m["role"] == "user"][-1]
    assert "The copy of the workspace you worked in was lost" in said and "TASK-A: set x_a" in said
    # It reported without writing again, so nothing of its lost change reaches the parent's workspace.
    assert (ws / "a.py").read_text() == "x_a = 1\n"
    assert report.endswith("Its changes are merged into your workspace: it changed no file."), report
