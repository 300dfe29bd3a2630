"""Subagents against the emulator: three read-only ones of one profile at once (request arrival order), the later
ones hitting the whole shared prefix, the parent's prefix untouched, a budget that stops one, and a resumed parent
that does not run a finished subagent again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.build import RunOptions, build_executor
from orchestrator.config.model import load_config
from orchestrator.conversation import ExecutorConversation, run_task
from orchestrator.subagents.profiles import NAME, find_profiles
from orchestrator.subagents.task_tool import TaskTool
from scenarios.emulator import RunningEmulator, Script, open_emulator
from scenarios.emulator.app import Response
from sessions.journal import read_journal
from sessions.wire.client import ClientSettings, DeepSeekClient
from tests.support.conversation import system_of, tool_names
from tests.support.subagents import FIXER, sub_session, subagent_workspace, task_call
from tests.support.tasks import task_conversation


def _script(parent: list[dict[str, Any]], subs: str = "abc") -> Script:
    return Script.model_validate(
        {"sessions": [{"key": "executor", "replies": parent}, *(sub_session(n) for n in subs)]}
    )


def _record(emu: RunningEmulator, bodies: list[bytes]) -> None:
    handle = emu.emulator.handle

    def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            bodies.append(body)
        return handle(method, path, headers, body)

    emu.emulator.handle = record  # type: ignore[method-assign]


def _who(body: bytes) -> str:
    """Which session sent ``body`` and how many requests it had sent before: ``executor`` or ``a``/``b``/``c``, and
    the number of assistant messages in it."""
    messages = json.loads(body)["messages"]
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    sent = sum(1 for m in messages if m["role"] == "assistant")
    name = first_user[5].lower() if first_user.startswith("TASK-") else "executor"
    return f"{name}{sent}"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}


async def _run(
    ws: Path, script: Script, bodies: list[bytes], run_id: str = "r1", on_event: Any = None
) -> tuple[Any, ExecutorConversation]:
    resolved = load_config(workspace=ws, env=_env(ws.parent))
    async with open_emulator(script=script) as emu:
        _record(emu, bodies)
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            run = task_conversation(
                resolved,
                ws,
                options=RunOptions(),
                client=client,
                run_id=run_id,
                memory_config_dir=ws.parent / "cfg",
                on_event=on_event,
            )
            try:
                return await run_task(run, "Review the project"), run
            finally:
                run.close()


def _firsts(ws: Path, run_id: str = "r1") -> list[tuple[int, int]]:
    """(cache-hit tokens, prompt tokens) of each subagent's first request, from its journal, sorted."""
    firsts = []
    for path in sorted((ws / ".reasonix" / "runs" / run_id / "agents").glob("*.jsonl")):
        usage = next(e for e in read_journal(path).events if e.get("kind") == "usage")["usage"]
        firsts.append((int(usage["prompt_cache_hit_tokens"]), int(usage["prompt_tokens"])))
    return sorted(firsts)


def _first_hits(ws: Path, run_id: str = "r1") -> list[int]:
    return [hit for hit, _ in _firsts(ws, run_id)]


async def test_three_read_only_subagents_run_at_once_and_the_later_ones_hit_the_shared_prefix(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    bodies: list[bytes] = []
    parent = [{"tool_calls": [task_call("a"), task_call("b"), task_call("c")]}, {"content": "All reviewed."}]
    summary, _ = await _run(ws, _script(parent), bodies)
    assert summary.status == "done", summary
    order = [_who(b) for b in bodies]
    # All three first requests arrive before any subagent's second one: they ran at once.
    assert order[0] == "executor0" and sorted(order[1:4]) == ["a0", "b0", "c0"], order
    assert sorted(order[4:7]) == ["a1", "b1", "c1"] and order[7] == "executor1", order
    # The parent reads the three reports as the task tool's results.
    results = [m["content"] for m in json.loads(bodies[7])["messages"] if m["role"] == "tool"]
    assert [r.splitlines()[1].split(":")[0] for r in results] == ["REPORT-A", "REPORT-B", "REPORT-C"]
    # Their prefix is the same bytes: system and tools identical; the first arrival misses, the next two hit it all.
    firsts = [json.loads(b) for b in bodies[1:4]]
    assert len({json.dumps([f["messages"][0], f["tools"]]) for f in firsts}) == 1
    assert [t["function"]["name"] for t in firsts[0]["tools"]] == ["grep", "read_file"]
    (miss, _), *later = _firsts(ws)
    assert miss == 0 and later[0][0] == later[1][0] > 0
    # "The whole prefix": all but the task's own message and the last partial 128-token cache unit hit.
    assert all(hit >= prompt - 128 - 40 for hit, prompt in later), later
    assert summary.sessions.keys() == {"executor", "agent:reviewer#1", "agent:reviewer#2", "agent:reviewer#3"}


async def test_the_parent_prefix_holds_the_index_and_the_reports_are_appended(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    bodies: list[bytes] = []
    parent = [{"tool_calls": [task_call("a")]}, {"content": "Reviewed."}]
    summary, _ = await _run(ws, _script(parent, "a"), bodies)
    assert summary.status == "done", summary
    first, last = bodies[0], bodies[-1]
    assert "# Subagents" in system_of(first) and "- reviewer: Reads code and reports problems" in system_of(first)
    assert "REVIEWER-MARK" not in system_of(first) and "task" in tool_names(first)
    assert last.startswith(first[:-2])  # everything the subagent added is appended bytes


async def test_without_profiles_there_is_no_index_and_no_task_tool(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path, profile=False)
    bodies: list[bytes] = []
    summary, _ = await _run(ws, _script([{"content": "Hi."}], ""), bodies)
    assert summary.status == "done"
    assert "task" not in tool_names(bodies[0]) and "Subagents" not in system_of(bodies[0])


async def test_a_subagent_past_its_budget_stops_and_the_parent_reads_why(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path, limit=1)
    bodies: list[bytes] = []
    parent = [{"tool_calls": [task_call("a")]}, {"content": "It ran out."}]
    summary, _ = await _run(ws, _script(parent, "a"), bodies)
    assert summary.status == "done", summary
    result = next(m for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool")["content"]
    assert "The subagent reviewer stopped before it finished: it used all 1 requests it is allowed" in result
    assert ".claude/agents/reviewer.md" in result


async def test_a_resumed_parent_does_not_run_a_finished_subagent_again(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    bodies: list[bytes] = []
    calls = {"tool_calls": [task_call("a"), task_call("b")]}
    sub_a = sub_session("a")
    sub_a["replies"][0].pop("faults")  # a finishes while b's first reply is still coming
    sub_b = sub_session("b")
    sub_b["replies"].append({"content": "REPORT-B2: b.py is fine after all."})
    script = Script.model_validate(
        {"sessions": [{"key": "executor", "replies": [calls, calls, {"content": "Done."}]}, sub_a, sub_b]}
    )
    resolved = load_config(workspace=ws, env=_env(tmp_path))
    journal = ws / ".reasonix" / "runs" / "r1" / "executor.jsonl"
    async with open_emulator(script=script) as emu:
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            scope = trio.CancelScope()
            handle = emu.emulator.handle

            def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
                if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
                    bodies.append(body)
                    if _who(body) == "b1":  # stop the parent while b works, a's report in
                        scope.cancel()
                return handle(method, path, headers, body)

            emu.emulator.handle = record  # type: ignore[method-assign]
            session = build_executor(resolved, ws, client, journal_path=journal, memory_config_dir=tmp_path / "cfg")
            with scope:
                await session.send("Review a and b")
            assert scope.cancelled_caught
            before = [_who(b) for b in bodies]
            assert sorted(before) == ["a0", "a1", "b0", "b1", "executor0"], before
            resumed = build_executor(
                resolved, ws, client, journal_path=journal, memory_config_dir=tmp_path / "cfg", resume=True
            )
            result = await resumed.send("go on")
    assert result.status == "done" and result.text == "Done."
    after = bodies[len(before) :]
    assert [_who(b) for b in after] == ["executor1", "b1", "executor2"]  # a was not run again; b went on
    b_first, b_resumed = bodies[before.index("b0")], after[1]
    assert json.loads(b_resumed)["messages"][0] == json.loads(b_first)["messages"][0]  # b's prefix, unchanged
    results = [m["content"] for m in json.loads(after[-1])["messages"] if m["role"] == "tool"][-2:]
    assert results[0].startswith('<report agent="reviewer">\nREPORT-A') and "REPORT-B2" in results[1]


async def test_a_skill_with_run_as_subagent_runs_as_one(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path, profile=False)
    (ws / ".reasonix" / "skills").mkdir(parents=True)
    (ws / ".reasonix" / "skills" / "audit.md").write_text(
        "---\nname: audit\ndescription: Audits one file\nrun_as: subagent\ntools: [read_file]\n---\n"
        "AUDIT-BODY: read the file and list its risks.\n"
    )
    bodies: list[bytes] = []
    call = {"name": "task", "arguments": {"agent": "audit", "task": "TASK-A: audit a.py"}}
    sub = sub_session("a") | {"system_contains": "AUDIT-BODY"}
    script = Script.model_validate(
        {"sessions": [{"key": "executor", "replies": [{"tool_calls": [call]}, {"content": "Audited."}]}, sub]}
    )
    summary, _ = await _run(ws, script, bodies)
    assert summary.status == "done", summary
    assert "AUDIT-BODY" not in system_of(bodies[0]) and "- audit: Audits one file" in system_of(bodies[0])
    sub_first = json.loads(bodies[1])
    assert sub_first["messages"][0]["content"].endswith("AUDIT-BODY: read the file and list its risks.")
    assert [t["function"]["name"] for t in sub_first["tools"]] == ["read_file"]
    assert "REPORT-A" in next(m for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool")["content"]


def _fixer_workspace(tmp_path: Path) -> Path:
    ws = subagent_workspace(tmp_path, profile=False)
    (ws / ".reasonix" / "agents").mkdir(parents=True)
    (ws / ".reasonix" / "agents" / "fixer.md").write_text(FIXER)
    return ws


def _fixer(name: str, content: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parent's task call for fixer ``name`` and its session, which writes ``content`` to a.py, then reports."""
    tag = f"TASK-{name.upper()}"
    call = {"name": "task", "arguments": {"agent": "fixer", "task": f"{tag}: set x_a"}}
    write = {"name": "write_file", "arguments": {"path": "a.py", "content": content}}
    sub = {
        "key": f"fixer-{name}",
        "system_contains": "FIXER-MARK",
        "user_contains": tag,
        "replies": [{"tool_calls": [write]}, {"content": f"REPORT-{name.upper()}: a.py now reads {content.strip()}."}],
    }
    return call, sub


def _tool_results(body: bytes) -> list[str]:
    return [m["content"] for m in json.loads(body)["messages"] if m["role"] == "tool"]


async def test_a_writing_subagent_works_in_a_copy_whose_changes_merge_back_and_gets_no_task_tool(
    tmp_path: Path,
) -> None:
    ws = _fixer_workspace(tmp_path)
    bodies: list[bytes] = []
    call, sub = _fixer("a", "x_a = 2\n")
    parent = [{"tool_calls": [call]}, {"content": "Fixed."}]
    script = Script.model_validate({"sessions": [{"key": "executor", "replies": parent}, sub]})
    seen: list[Any] = []
    summary, _ = await _run(ws, script, bodies, on_event=seen.append)
    assert summary.status == "done", summary
    assert (ws / "a.py").read_text() == "x_a = 2\n"
    assert "- fixer: Fixes one file (may change files)" in system_of(bodies[0])
    sub_tools = tool_names(bodies[1])
    assert "write_file" in sub_tools and "bash" in sub_tools and "task" not in sub_tools  # one level deep
    (result,) = _tool_results(bodies[-1])
    assert result.startswith('<report agent="fixer">\nREPORT-A')
    assert result.endswith("</report>\nIts changes are merged into your workspace: a.py.")
    # It wrote in its own copy, made under the run directory as a goal branch's is, and gone once merged.
    (written,) = [e for e in seen if getattr(e, "kind", "") == "tool_finished" and e.name == "write_file"]
    assert not written.is_error
    branches = ws / ".reasonix" / "runs" / "r1" / "branches"
    assert not branches.exists() or not any(p for p in branches.iterdir() if not p.name.startswith("."))
    (finished,) = [e for e in seen if getattr(e, "kind", "") == "subagent_finished"]
    assert finished.ok and not finished.read_only and finished.merged == ("a.py",)


async def test_two_writing_subagents_that_change_the_same_lines_merge_one_and_the_parent_reads_the_conflict(
    tmp_path: Path,
) -> None:
    ws = _fixer_workspace(tmp_path)
    bodies: list[bytes] = []
    (call_a, sub_a), (call_b, sub_b) = _fixer("a", "x_a = 2\n"), _fixer("b", "x_a = 3\n")
    parent = [{"tool_calls": [call_a, call_b]}, {"content": "One of them conflicted."}]
    script = Script.model_validate({"sessions": [{"key": "executor", "replies": parent}, sub_a, sub_b]})
    seen: list[Any] = []
    summary, _ = await _run(ws, script, bodies, on_event=seen.append)
    assert summary.status == "done", summary
    results = _tool_results(bodies[-1])
    merged = [r for r in results if r.endswith("Its changes are merged into your workspace: a.py.")]
    refused = [r for r in results if r.startswith("The subagent fixer finished, but its changes were not merged")]
    assert len(merged) == 1 and len(refused) == 1, results
    winner = "2" if "REPORT-A" in merged[0] else "3"
    assert (ws / "a.py").read_text() == f"x_a = {winner}\n"  # all or nothing: the other left the file as merged
    assert refused[0].startswith(  # in its own words around the merge's, naming no step
        "The subagent fixer finished, but its changes were not merged back and nothing in the workspace was changed: "
        "changed both in its copy and in the workspace since it began: a.py (both changed the same lines). Redo"
    )
    assert "step" not in refused[0].split("\n")[0]
    assert "Redo its changes to a.py yourself" in refused[0] and '<report agent="fixer">' in refused[0]
    finished = sorted((e for e in seen if getattr(e, "kind", "") == "subagent_finished"), key=lambda e: e.ok)
    assert [e.ok for e in finished] == [False, True] and finished[1].merged == ("a.py",)
    assert "a.py (both changed the same lines)" in finished[0].reason


async def test_the_subagents_together_stop_at_their_shared_bound_and_the_parent_goes_on(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    bodies: list[bytes] = []
    parent = [{"tool_calls": [task_call("a"), task_call("b"), task_call("c")]}, {"content": "They ran out."}]
    resolved = load_config(workspace=ws, env=_env(tmp_path))
    async with open_emulator(script=_script(parent)) as emu:
        _record(emu, bodies)
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            run = task_conversation(resolved, ws, options=RunOptions(), client=client)
            tool = run.session.registry.get("task")
            assert isinstance(tool, TaskTool)
            tool.runner.gate.limit = 2
            summary = await run_task(run, "Review")
    assert summary.status == "done" and summary.text == "They ran out."
    assert sum(1 for b in bodies if not _who(b).startswith("executor")) == 2  # no subagent request past the bound
    results = [m["content"] for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool"]
    assert all("the subagents of this session used all 2 requests they may send together" in r for r in results)


@given(st.text(max_size=400), st.sampled_from(["reviewer.md", "x.md", "-bad.md"]))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
def test_any_profile_file_is_read_or_skipped_never_an_error(tmp_path: Path, text: str, filename: str) -> None:
    root = tmp_path / filename.removesuffix(".md")
    (root / ".reasonix" / "agents").mkdir(parents=True, exist_ok=True)
    (root / ".reasonix" / "agents" / filename).write_text(text, encoding="utf-8", errors="surrogatepass")
    for name, profile in find_profiles(root).items():
        assert NAME.match(name) and profile.system.strip() and profile.max_requests >= 1
        assert profile.source == f".reasonix/agents/{filename}"


async def test_agents_max_parallel_one_runs_them_one_after_another(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    (ws / "reasonix.toml").write_text("[agents]\nmax_parallel = 1\n")
    bodies: list[bytes] = []
    parent = [{"tool_calls": [task_call("a"), task_call("b"), task_call("c")]}, {"content": "All reviewed."}]
    summary, _ = await _run(ws, _script(parent), bodies)
    assert summary.status == "done", summary
    order = [_who(b) for b in bodies][1:-1]
    assert all(order[i][0] == order[i + 1][0] for i in (0, 2, 4)), order  # each one's two requests in a row
    miss, *later = _first_hits(ws)
    assert miss == 0 and later[0] == later[1] > 0  # one at a time, the later ones still hit the shared prefix


async def test_asking_the_same_task_again_runs_it_again(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    bodies: list[bytes] = []
    sub = sub_session("a")
    sub["replies"] += [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}, {"content": "REPORT-A2"}]
    parent = [{"tool_calls": [task_call("a")]}, {"tool_calls": [task_call("a")]}, {"content": "Twice."}]
    script = Script.model_validate({"sessions": [{"key": "executor", "replies": parent}, sub]})
    summary, _ = await _run(ws, script, bodies)
    assert summary.status == "done", summary
    assert sum(1 for b in bodies if _who(b).startswith("a")) == 4
    results = [m["content"] for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool"]
    assert "REPORT-A:" in results[0] and "REPORT-A2" in results[1]
