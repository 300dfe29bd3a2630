"""Any OpenAI-compatible model for any role (issue 46), through the real CLI against loopback OpenAI-style servers
(:mod:`tests.orchestrator.providers_support`): no DeepSeek field reaches them, the cache is counted from
``cached_tokens`` (or said to be not reported), an unpriced model refuses a dollar budget and obeys a request budget,
and a goal's planner, executor and escalation each go to their own server, every session byte-stable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.orchestrator.goal_support import call, executor_step, reply, step
from tests.support.repl_pty import repl_workspace

from .providers_support import DEEPSEEK_ONLY, OpenAIServer, byte_stable, openai_server, provider_entry
from .run_support import ROOT, clean_env, json_lines, reasonix

READ_THEN_ANSWER = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
    {"content": "add() subtracts."},
]


def _user_config(env: dict[str, str], text: str) -> None:
    path = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def _no_deepseek_fields(server: OpenAIServer) -> None:
    assert server.bodies
    for body in server.bodies:
        assert not set(json.loads(body)) & set(DEEPSEEK_ONLY)


def test_run_on_an_openai_server_counts_hits_from_cached_tokens(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("local-coder", list(READ_THEN_ANSWER))) as server:
        _user_config(env, provider_entry("llama-local", server, free=True) + '[roles]\nexecutor = "llama-local"\n')
        proc = reasonix("run", "What does add() do?", "--workspace", str(ws), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    _no_deepseek_fields(server)
    assert byte_stable(server.bodies)
    summary = json_lines(proc.stdout)[-1]
    assert summary["status"] == "done" and summary["requests"] == 2
    hits = sum(u["prompt_tokens_details"]["cached_tokens"] for u in server.reported)
    assert hits > 0
    assert summary["prompt_cache_hit_tokens"] == hits
    assert summary["prompt_cache_miss_tokens"] == sum(u["prompt_tokens"] for u in server.reported) - hits
    assert summary["cost_usd"] == 0  # free = true
    diagnostics = [e for e in json_lines(proc.stdout) if e.get("kind") == "cache"]
    assert diagnostics and not any(d["diagnostics"]["unexplained_miss"] for d in diagnostics)


def test_a_llama_server_reporting_only_timings_has_its_hits_counted_from_cache_n(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("local-coder", list(READ_THEN_ANSWER), usage="timings")) as server:
        _user_config(env, provider_entry("llama-local", server, free=True) + '[roles]\nexecutor = "llama-local"\n')
        proc = reasonix("run", "What does add() do?", "--workspace", str(ws), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    hits = sum(t["cache_n"] for t in server.timings)
    assert hits > 0 and all("prompt_tokens_details" not in u for u in server.reported)
    usage = [e["usage"] for e in json_lines(proc.stdout) if e.get("kind") == "usage"]
    assert [u["prompt_cache_hit_tokens"] for u in usage] == [t["cache_n"] for t in server.timings]
    assert [u["prompt_cache_miss_tokens"] for u in usage] == [t["prompt_n"] for t in server.timings]
    summary = json_lines(proc.stdout)[-1]
    assert summary["prompt_cache_hit_tokens"] == hits


def test_a_server_without_usage_is_not_reported_and_never_a_miss(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("local-coder", list(READ_THEN_ANSWER), usage="none")) as server:
        _user_config(env, provider_entry("bare", server) + '[roles]\nexecutor = "bare"\n')
        proc = reasonix("run", "What does add() do?", "--workspace", str(ws), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    events = json_lines(proc.stdout)
    usage = [e for e in events if e.get("kind") == "usage"]
    assert len(usage) == 2 and all(e["estimated"] for e in usage)
    assert all(e["usage"]["prompt_tokens"] > 0 for e in usage)  # our own count, not $0 of nothing
    assert all(e["usage"]["prompt_cache_hit_tokens"] == e["usage"]["prompt_cache_miss_tokens"] == 0 for e in usage)


def test_an_unpriced_model_refuses_a_dollar_budget_and_obeys_a_request_budget(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    many = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}] * 5
    with openai_server(OpenAIServer("local-coder", list(many))) as server:
        _user_config(env, provider_entry("unpriced", server) + '[roles]\nexecutor = "unpriced"\n')
        refused = reasonix("-p", "hi", "--workspace", str(ws), "--max-budget-usd", "1", env=env)
        assert not server.bodies  # refused before anything was sent
        limited = reasonix("run", "Loop", "--workspace", str(ws), "--json", "--max-requests", "2", env=env)
    assert refused.returncode == 2, refused.stderr
    assert "a budget in dollars cannot be kept on local-coder: no price is configured" in refused.stderr
    assert "--max-requests" in refused.stderr and "Traceback" not in refused.stderr
    assert limited.returncode != 0 and "Traceback" not in limited.stderr
    summary = json_lines(limited.stdout)[-1]
    assert summary["status"] == "request_limit" and summary["requests"] == 2 == len(server.bodies)


def test_print_mode_on_an_openai_server(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("local-coder", list(READ_THEN_ANSWER))) as server:
        _user_config(env, provider_entry("llama-local", server, free=True) + '[roles]\nexecutor = "llama-local"\n')
        proc = reasonix("-p", "What does add() do?", "--workspace", str(ws), "--output-format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    _no_deepseek_fields(server)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["result"] == "add() subtracts."
    hits = sum(u["prompt_tokens_details"]["cached_tokens"] for u in server.reported)
    assert hits > 0 and result["usage"]["cache_read_input_tokens"] == hits


def test_model_flag_picks_a_provider_by_name(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("gateway-model", [{"content": "hello from the gateway"}])) as server:
        _user_config(env, provider_entry("gateway", server, free=True))  # no role: DeepSeek stays the default
        proc = reasonix("run", "hi", "--workspace", str(ws), "--json", "--model", "gateway", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json_lines(proc.stdout)[-1]["text"] == "hello from the gateway"
    _no_deepseek_fields(server)


def test_code_on_an_openai_server(tmp_path: Path) -> None:
    ws, env = repl_workspace(tmp_path), clean_env(tmp_path)
    with openai_server(OpenAIServer("local-coder", list(READ_THEN_ANSWER))) as server:
        _user_config(env, provider_entry("llama-local", server, free=True) + '[roles]\nexecutor = "llama-local"\n')
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator", "code", "--workspace", str(ws)],
            env={**env, "TERM": "xterm", "COLUMNS": "120", "LINES": "40"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=180,
            dimensions=(40, 120),
        )
        child.expect("ask ❯")
        child.sendline("what does calc.py do?")
        child.expect("add\\(\\) subtracts")
        child.expect("ask ❯")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
        transcript = child.before or ""
    assert child.exitstatus == 0, transcript
    assert "Traceback" not in transcript
    assert len(server.bodies) == 2 and byte_stable(server.bodies)
    _no_deepseek_fields(server)


@pytest.mark.bwrap
def test_a_goal_with_planner_executor_and_escalation_on_three_servers(tmp_path: Path) -> None:
    ws, env = tmp_path / "ws", clean_env(tmp_path)
    (ws / "calc").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "calc" / "__init__.py").write_text("")
    steps = [
        step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"]),
        step(
            "S2",
            "Add calc/mul.py",
            deps=["S1"],
            writes=["calc/mul.py"],
            needs_pro=True,
            verify=["python3 -c 'from calc.mul import mul; assert mul(3, 4) == 12'"],
        ),
    ]
    planning = [
        reply(call("submit_plan", objective="Grow calc", steps=steps)),
        reply(call("goal_verdict", verdict="complete", evidence=["every step verified"])),
    ]
    executing = executor_step("S1", "calc/ops.py", "def add(a, b):\n    return a + b\n")
    escalated = executor_step("S2", "calc/mul.py", "def mul(a, b):\n    return a * b\n")
    with (
        openai_server(OpenAIServer("plan-model", planning)) as planner,
        openai_server(OpenAIServer("exec-model", executing)) as executor,
        openai_server(OpenAIServer("big-model", escalated)) as big,
    ):
        _user_config(
            env,
            provider_entry("planner-srv", planner, free=True, max_output=3000)
            + provider_entry("exec-srv", executor, free=True, max_output=4000)
            + provider_entry("big-srv", big, free=True, max_output=5000)
            + '[roles]\nplanner = "planner-srv"\nexecutor = "exec-srv"\nescalation = "big-srv"\n',
        )
        proc = reasonix("goal", "Grow calc", "--workspace", str(ws), "--yes", "--json", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (ws / "calc" / "mul.py").exists()
    for server in (planner, executor, big):
        _no_deepseek_fields(server)
        assert byte_stable(server.bodies), server.model  # each session's consecutive requests only append
    assert len(big.bodies) == 2  # S2 went to the escalation's server
    assert b"You are the planner" in planner.bodies[0] and b"You are the executor" in executor.bodies[0]
    # The escalated turn is the executor's conversation, sent on: its S1 history is in the third server's request.
    assert b"You are the executor" in big.bodies[0] and b"calc/ops.py" in big.bodies[0]
    assert json.loads(big.bodies[0])["model"] == "big-model"
    # each entry's max_output is the max_tokens of every request to its model, whichever session sends it
    for server, cap in ((planner, 3000), (executor, 4000), (big, 5000)):
        assert {json.loads(b)["max_tokens"] for b in server.bodies} == {cap}, server.model


BIG_READ = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "big.py"}}]},
    {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
    {"content": "The digest: big.py was read; it defines f0 to f299."},
    {"content": "done."},
]


def _big_run(tmp_path: Path, **entry: object) -> tuple[OpenAIServer, list[dict[str, object]]]:
    tmp_path.mkdir()
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    (ws / "big.py").write_text("".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(300)))
    with openai_server(OpenAIServer("local-coder", list(BIG_READ))) as server:
        _user_config(
            env, provider_entry("llama-local", server, free=True, **entry) + '[roles]\nexecutor = "llama-local"\n'
        )
        proc = reasonix("run", "Read big.py", "--workspace", str(ws), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return server, json_lines(proc.stdout)


def test_max_output_bounds_every_request_and_context_window_decides_compaction(tmp_path: Path) -> None:
    """A [[providers]] entry's max_output is every request's max_tokens (the compaction digest's too), and its
    context_window is the window compaction measures against: ~3,450 tokens after reading big.py pass 80 % of 3,000
    (the server counts a token per four bytes, and the client takes the server's count)."""
    server, events = _big_run(tmp_path / "small", context_window=3000, max_output=512)
    bodies = [json.loads(b) for b in server.bodies]
    assert [b.get("max_tokens") for b in bodies] == [512] * len(bodies)
    _no_deepseek_fields(server)  # the digest request included: no thinking field
    assert [e for e in events if e.get("kind") == "compaction"]
    assert bodies[2]["messages"][-1]["content"].startswith("Compress this session history")
    assert byte_stable(server.bodies[:2])  # consecutive requests before the rewrite only append
    assert byte_stable([server.bodies[3], *server.bodies[4:]])

    # the same run without them: no max_tokens, and the default window of 1M tokens never compacts here
    plain, events = _big_run(tmp_path / "plain")
    assert all("max_tokens" not in json.loads(b) for b in plain.bodies)
    assert not [e for e in events if e.get("kind") == "compaction"]
    assert byte_stable(plain.bodies)
