"""Subagents through the real CLI against the emulator process: ``reasonix run`` shows each subagent's lines and
figures, and a run killed with SIGKILL while a subagent works does not run the finished one again when resumed."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import trio

from orchestrator.build import build_executor
from orchestrator.config.model import load_config
from sessions.wire.client import ClientSettings, DeepSeekClient
from tests.support.subagents import sub_session, subagent_workspace, task_call

from ..run_support import clean_env, emulator_process, emulator_stats, json_lines, reasonix, start_reasonix


def _script(parent: list[dict[str, Any]], subs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": parent}, *subs]}


def test_reasonix_run_shows_each_subagent_and_its_figures(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    env = clean_env(tmp_path / "home")
    parent = [{"tool_calls": [task_call("a"), task_call("b")]}, {"content": "Both fine."}]
    args = ("run", "--workspace", str(ws), "--sandbox", "full-access", "Review")
    with emulator_process(_script(parent, [sub_session("a"), sub_session("b")]), tmp_path, env) as url:
        shown = reasonix(*args, "--base-url", url, env=env)
    assert shown.returncode == 0, shown.stderr
    with emulator_process(_script(parent, [sub_session("a"), sub_session("b")]), tmp_path, env) as url:
        as_json = reasonix(*args, "--base-url", url, "--json", env=env)
    out = shown.stdout
    assert "[agent:reviewer#1] ▸ read_file" in out and "[agent:reviewer#2] ▸ read_file" in out, out
    assert 'task agent="reviewer"' in out and "Both fine." in out
    summary = json_lines(as_json.stdout)[-1]
    sessions = summary["sessions"]
    assert set(sessions) == {"executor", "agent:reviewer#1", "agent:reviewer#2"}, summary
    assert [sessions[f"agent:reviewer#{n}"]["requests"] for n in (1, 2)] == [2, 2]
    assert summary["requests"] == 6
    # One of the two subagents arrived second and hit the whole shared prefix on its first request.
    assert max(sessions[f"agent:reviewer#{n}"]["prompt_cache_hit_tokens"] for n in (1, 2)) > 0
    # Each subagent's end is an event with its profile, cost, escalations and cache figures: in --json, on the
    # terminal and in `reasonix runs show`, the same figures as the summary's.
    finished = [e for e in json_lines(as_json.stdout) if e.get("kind") == "subagent_finished"]
    assert sorted(e["session"] for e in finished) == ["agent:reviewer#1", "agent:reviewer#2"]
    for event in finished:
        figures = sessions[event["session"]]
        assert event["profile"] == "reviewer" and event["ok"] and event["read_only"] and event["escalations"] == 0
        assert event["requests"] == figures["requests"] == 2
        assert event["cache_hit_tokens"] == figures["prompt_cache_hit_tokens"]
        assert event["cache_miss_tokens"] == figures["prompt_cache_miss_tokens"]
        assert event["cost_usd"] == round(figures["cost_usd"], 6) > 0
    for n in (1, 2):
        assert f"subagent agent:reviewer#{n} (read-only) done · 2 requests · $" in out, out
    listed = reasonix("runs", "show", "--workspace", str(ws), env=env)
    assert listed.returncode == 0, listed.stderr
    lines = [line.strip() for line in listed.stdout.splitlines() if "⑂ subagent agent:reviewer#" in line]
    assert len(lines) == 2 and all("(read-only) done · 2 requests" in line for line in lines), listed.stdout
    assert "escalations" in lines[0] and "hit /" in lines[0]
    shown_json = json.loads(reasonix("runs", "show", "--workspace", str(ws), "--json", env=env).stdout)
    assert [e["kind"] for e in shown_json["events"]] == ["subagent_finished", "subagent_finished"]


def test_sigkill_during_a_subagent_then_resume_does_not_run_the_finished_one_again(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    env = clean_env(tmp_path / "home")
    sub_a = sub_session("a")
    sub_a["replies"][0].pop("faults")
    sub_b = sub_session("b")
    sub_b["replies"][0]["faults"] = [{"kind": "stall", "seconds": 600, "then": "continue"}]
    sub_b["replies"][1] = {"content": "REPORT-B2: b.py is fine after all."}  # its first reply went to the killed run
    calls = {"tool_calls": [task_call("a"), task_call("b")]}
    script = _script([calls, calls, {"content": "Done."}], [sub_a, sub_b])
    with emulator_process(script, tmp_path, env) as url:
        proc = start_reasonix(
            "run", "--workspace", str(ws), "--base-url", url, "--sandbox", "full-access", "Review a and b", env=env
        )
        try:
            agents = ws / ".reasonix" / "runs"
            for _ in range(600):  # a's report is kept while b's first reply stalls
                if list(agents.glob("*/agents/*.result.json")):
                    break
                try:
                    proc.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    continue
                raise AssertionError(proc.stderr.read() if proc.stderr else "reasonix run ended early")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL
        journal = next(agents.glob("*/executor.jsonl"))
        before = emulator_stats(url)["sessions"]
        assert before["sub-a"]["requests"] == 2 and before["sub-b"]["requests"] == 1, before
        text = trio.run(_resume, ws, journal, url, env)
        after = emulator_stats(url)["sessions"]
    assert text == "Done."
    assert after["sub-a"]["requests"] == 2  # not run again
    assert after["sub-b"]["requests"] == 2  # went on from its journal


async def _resume(ws: Path, journal: Path, url: str, env: dict[str, str]) -> str:
    resolved = load_config(workspace=ws, env=env)
    client = DeepSeekClient(base_url=url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
    async with client:
        session = build_executor(resolved, ws, client, journal_path=journal, resume=True)
        result = await session.send("go on")
        results = [json.loads(m)["content"] for m in session.log.encoded if json.loads(m)["role"] == "tool"]
        assert results[-2].startswith('<report agent="reviewer">\nREPORT-A') and "REPORT-B2" in results[-1]
        return result.text
