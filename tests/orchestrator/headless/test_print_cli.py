"""``reasonix -p`` end to end: the real CLI in a subprocess against a real ``reasonix emulate`` subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.journal import read_journal

from ..run_support import ROOT, clean_env, emulator_process, emulator_stats, json_lines, reasonix, start_reasonix

SCHEMA = json.loads((ROOT / "docs" / "stream-json.schema.json").read_text())
UNIT = 128


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()  # ends the upward search for standing memory here
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def _script(*replies: dict[str, Any]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": list(replies)}]}


READ = {"reasoning": "Read it first.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
ANSWER = {"content": "add() subtracts b from a."}


def _print(
    ws: Path, url: str, env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "-p", *args, "--workspace", str(ws), "--base-url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
        input=stdin if stdin is not None else "",
    )


def test_the_published_schema_is_the_one_the_code_makes() -> None:
    from orchestrator.headless.events import SCHEMA_VERSION, json_schema

    assert json.loads(json.dumps(json_schema())) == SCHEMA
    assert SCHEMA["schema_version"] == SCHEMA_VERSION


@given(st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=30))
def test_a_summed_cost_prints_without_float_noise(tokens: list[int]) -> None:
    """Issue 48 item 30: ``-p`` printed ``7.6434000000001e-05``. Costs are sums of per-token prices; the lines carry
    them rounded to 12 decimals, which is every digit they really have."""
    from orchestrator.headless.events import ResultLine, TokenUsage

    price = 0.028 / 1e6  # a cache hit at flash's price: dollars per token
    total = sum(n * price for n in tokens)
    counts = ("input_tokens", "cache_read_input_tokens", "output_tokens", "prompt_tokens")  # all 0
    usage = TokenUsage.model_validate(
        dict.fromkeys((*counts, "prompt_cache_hit_tokens", "prompt_cache_miss_tokens"), 0)
    )
    line = ResultLine(
        session_id="s",
        subtype="success",
        is_error=False,
        result="",
        status="done",
        duration_ms=0,
        duration_api_ms=0,
        num_turns=1,
        total_cost_usd=total,
        usage=usage,
        cache_hit_ratio=None,
        model="m",
        journal="j",
    )
    printed = json.loads(line.model_dump_json())["total_cost_usd"]
    assert printed == round(total, 12)  # 0.1 + 0.2 prints as 0.3, not 0.30000000000000004
    assert abs(printed - total) < 1e-12


def test_text_prints_the_final_answer_only(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(READ, ANSWER), tmp_path, env) as url:
        proc = _print(ws, url, env, "what does add do?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "add() subtracts b from a.\n"


def test_stream_json_lines_follow_the_schema_and_the_result_matches_the_server(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(READ, ANSWER), tmp_path, env) as url:
        proc = _print(ws, url, env, "what does add do?", "--output-format", "stream-json", "--include-partial-messages")
        stats = emulator_stats(url)["sessions"]["executor"]
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    for line in lines:
        jsonschema.validate(line, SCHEMA)
    assert [(x["type"], x.get("subtype")) for x in (lines[0], lines[-1])] == [("system", "init"), ("result", "success")]
    init, result = lines[0], lines[-1]
    assert init["cwd"] == str(ws) and "read_file" in init["tools"] and init["permissionMode"] == "auto"
    assert {x["session_id"] for x in lines} == {init["session_id"]}
    assert len({x["uuid"] for x in lines}) == len(lines)  # every line has an id of its own
    kinds = [x["type"] for x in lines]
    assert kinds.count("assistant") == 2 == result["num_turns"] == stats["requests"]
    first = next(x for x in lines if x["type"] == "assistant")["message"]["content"]
    assert first[0]["type"] == "thinking" and first[0]["thinking"] == "Read it first." and first[0]["signature"]
    assert (
        first[1]["type"] == "tool_use" and first[1]["name"] == "read_file" and first[1]["input"] == {"path": "calc.py"}
    )
    tool_result = next(x for x in lines if x["type"] == "user")["message"]["content"][0]
    assert tool_result["tool_use_id"] == first[1]["id"] and "return a - b" in tool_result["content"]
    deltas = "".join(x["event"]["delta"].get("text", "") for x in lines if x["type"] == "stream_event")
    assert deltas == "add() subtracts b from a." == result["result"]
    # The result's figures are the server's, summed over every request, and the assistant lines' sum.
    usage = result["usage"]
    assert usage["prompt_tokens"] == stats["prompt_tokens"]
    assert usage["cache_read_input_tokens"] == usage["prompt_cache_hit_tokens"] == stats["hit_tokens"]
    assert usage["input_tokens"] == usage["prompt_cache_miss_tokens"] == stats["miss_tokens"]
    assert usage["output_tokens"] == stats["completion_tokens"]
    costs = [x["message"]["cost_usd"] for x in lines if x["type"] == "assistant"]
    assert result["total_cost_usd"] == pytest.approx(sum(costs)) and result["total_cost_usd"] > 0
    # Every cost as it really is, without float-summing noise (issue 48 item 30: 7.6434000000001e-05).
    assert all(c == round(c, 12) for c in [*costs, result["total_cost_usd"]])
    assert result["duration_ms"] >= result["duration_api_ms"] >= 0


def test_json_prints_one_result_and_resume_continues_the_conversation(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(ANSWER, {"content": "Still subtracting."}), tmp_path, env) as url:
        first = _print(ws, url, env, "what does add do?", "--output-format", "json")
        assert first.returncode == 0, first.stderr
        (result,) = json_lines(first.stdout)
        jsonschema.validate(result, SCHEMA)
        again = _print(ws, url, env, "and now?", "--output-format", "json", "--resume", result["session_id"])
    assert again.returncode == 0, again.stderr
    (second,) = json_lines(again.stdout)
    assert second["session_id"] == result["session_id"] and second["result"] == "Still subtracting."
    # The continued conversation re-sends the first turn's bytes: its one request hits all of that prefix.
    assert second["usage"]["cache_read_input_tokens"] >= result["usage"]["prompt_tokens"] // UNIT * UNIT
    state = read_journal(Path(result["journal"]))
    assert [m.content for m, _ in state.messages if m.role == "user"] == ["what does add do?", "and now?"]


def test_stream_json_input_is_one_conversation_and_the_second_turn_hits_the_first(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    messages = [
        {"type": "user", "message": {"role": "user", "content": "what does add do?"}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "and subtract?"}]}},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    with emulator_process(_script(READ, ANSWER, {"content": "There is none."}), tmp_path, env) as url:
        proc = _print(ws, url, env, "--input-format", "stream-json", "--output-format", "stream-json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    results = [x for x in lines if x["type"] == "result"]
    assert [r["result"] for r in results] == ["add() subtracts b from a.", "There is none."]
    assistant = [x["message"]["usage"] for x in lines if x["type"] == "assistant"]
    assert len(assistant) == 3
    # The second turn's request starts with the whole of the first turn's last request: a prefix hit.
    assert assistant[2]["cache_read_input_tokens"] >= assistant[1]["prompt_tokens"] // UNIT * UNIT > 0


def test_max_budget_usd_stops_before_a_request_that_could_pass_the_cap(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    # Flash at its peak prices, flat: the shipped table halves them off-peak, and the cap must bite at any hour.
    config = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[prices.families.flash]\nhit = 0.006\nmiss = 0.30\noutput = 1.20\n")
    with emulator_process(_script(READ, READ, READ, ANSWER), tmp_path, env) as url:
        proc = _print(ws, url, env, "loop", "--output-format", "json", "--max-budget-usd", "0.0005")
        stats = emulator_stats(url)["sessions"]["executor"]
    assert proc.returncode == 3, proc.stderr
    (result,) = json_lines(proc.stdout)
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"] is True
    assert result["num_turns"] == stats["requests"] == 1
    assert 0 < result["total_cost_usd"] <= 0.0005
    assert "--max-budget-usd" in proc.stderr and result["session_id"] in proc.stderr


def test_max_turns_and_allowed_tools(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(READ, READ, ANSWER), tmp_path, env) as url:
        proc = _print(
            ws, url, env, "go", "--output-format", "stream-json", "--max-turns", "2", "--allowed-tools", "grep,glob"
        )
    assert proc.returncode == 3, proc.stderr
    lines = json_lines(proc.stdout)
    refused = [x["message"]["content"][0] for x in lines if x["type"] == "user"]
    assert refused and all(r["is_error"] and "not among the allowed tools" in r["content"] for r in refused)
    assert lines[-1]["subtype"] == "error_max_turns" and lines[-1]["num_turns"] == 2
    assert "read_file" in lines[0]["tools"]  # the tool list (the cached prefix) is unchanged


def test_prompt_from_stdin_and_usage_errors(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(ANSWER), tmp_path, env) as url:
        proc = _print(ws, url, env, "-", stdin="what does add do?\n")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "add() subtracts b from a.\n"
        missing = _print(ws, url, env, "hi", "--resume", "20990101-000000-abcdef")
        assert missing.returncode == 2 and "no conversation" in missing.stderr and "Traceback" not in missing.stderr
        empty = _print(ws, url, env, "   ")
        assert empty.returncode == 2 and "prompt is empty" in empty.stderr
        bad = _print(ws, url, env, "--input-format", "stream-json", stdin="not json\n")
        assert bad.returncode == 2 and "line 1 of standard input" in bad.stderr, bad.stderr


@pytest.mark.bwrap
def test_piped_into_head_it_ends_quietly(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(READ, ANSWER), tmp_path, env) as url:
        command = (
            f"set -o pipefail; {sys.executable} -m orchestrator -p 'what does add do?' --output-format stream-json "
            f"--workspace {ws} --base-url {url} | head -1"
        )
        proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert json.loads(proc.stdout)["subtype"] == "init"
    assert proc.stderr == ""
    assert proc.returncode in (0, 141)  # 141 when the write after head left met the closed pipe


def test_help_names_the_print_command() -> None:
    proc = reasonix("--help", env=clean_env(Path("/nonexistent")))
    assert "print" in proc.stdout


def test_ctrl_c_mid_request_prints_a_cancelled_result_and_exits_130(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    emulator = start_reasonix("emulate", "--port", "0", "--latency", "ttft=120", env=env)
    try:
        assert emulator.stdout is not None
        url = emulator.stdout.readline().strip().removeprefix("listening on ")
        proc = start_reasonix(
            "-p", "hi", "--output-format", "stream-json", "--workspace", str(ws), "--base-url", url, env=env
        )
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["subtype"] == "init"
        for _ in range(10_000):  # until the request is in flight (Ctrl-C is watched from then on), bounded
            if emulator_stats(url)["total"]["requests"] >= 1:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        emulator.send_signal(signal.SIGINT)
        emulator.wait(timeout=30)
    assert proc.returncode == 130, err
    result = json.loads(out.splitlines()[-1])
    assert result["type"] == "result" and result["status"] == "cancelled" and result["session_id"] in err
    assert "Traceback" not in err


def test_claude_code_flags_are_accepted_and_those_not_honoured_are_named(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(ANSWER), tmp_path, env) as url:
        proc = _print(
            ws, url, env, "hi", "--output-format", "stream-json", "--verbose", "--system-prompt=",
            "--setting-sources=", "--strict-mcp-config", "--fork-session", "--add-dir=/srv", "--effort=high",
            "--allowedTools=Read,Bash(git log:*)", "--disallowedTools=WebFetch", "--permission-mode=dontAsk",
        )  # fmt: skip
        refused = _print(ws, url, env, "hi", "--system-prompt=Be a pirate.")
    assert proc.returncode == 0, proc.stderr
    init = json_lines(proc.stdout)[0]
    assert init["ignored"] == ["--setting-sources", "--effort", "--add-dir"]
    assert init["permissionMode"] == "default" and init["approval_mode"] == "ask"
    assert refused.returncode == 2 and "--append-system-prompt" in refused.stderr


def test_append_system_prompt_goes_to_the_first_message_and_moves_no_cached_byte(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(_script(ANSWER, ANSWER, ANSWER), tmp_path, env) as url:
        plain = _print(ws, url, env, "hi", "--output-format", "json")
        again = _print(ws, url, env, "hi", "--output-format", "json")
        appended = _print(ws, url, env, "hi", "--output-format", "json", "--append-system-prompt", "Answer in French.")
    results = [json_lines(p.stdout)[0] for p in (plain, again, appended)]
    state = read_journal(Path(results[2]["journal"]))
    (first,) = [m.content for m, _ in state.messages if m.role == "user"]
    assert isinstance(first, str) and first.endswith("hi") and "Answer in French." in first
    # A new conversation re-sends the same prefix: the appended text (after the user's words) moves none of it.
    full = results[1]["usage"]["cache_read_input_tokens"]
    assert full >= results[0]["usage"]["prompt_tokens"] // UNIT * UNIT > 0
    assert results[2]["usage"]["cache_read_input_tokens"] >= full - UNIT
