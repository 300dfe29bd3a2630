"""Scripted replies and every fault kind, seen on the wire by a plain HTTP client."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio

from scenarios.emulator import Script, ScriptInvalid, open_emulator
from scenarios.emulator.render import CALL_BEGIN, TOOL_SEP

AUTH = {"Authorization": "Bearer test-key"}
CALL = {"name": "read_file", "arguments": {"path": "src/app.py"}}


def script(*replies: dict[str, Any], key: str = "executor", marker: str | None = "EXECUTOR") -> Script:
    session: dict[str, Any] = {"key": key, "replies": list(replies)}
    if marker:
        session["system_contains"] = marker
    return Script.model_validate({"sessions": [session]})


def body(stream: bool = True, system: str = "You are the EXECUTOR.") -> dict[str, Any]:
    return {
        "model": "deepseek-v4-flash",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "go"}],
        "stream": stream,
    }


async def read_stream(client: httpx.AsyncClient, payload: dict[str, Any]) -> tuple[int, list[str]]:
    """Status and the SSE lines (data and comments) until the server ends or drops the stream."""
    lines: list[str] = []
    async with client.stream("POST", "/chat/completions", json=payload, headers=AUTH) as r:
        if r.status_code != 200:
            await r.aread()
            return r.status_code, lines
        async for line in r.aiter_lines():
            if line:
                lines.append(line)
    return 200, lines


def chunks(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def assembled(lines: list[str]) -> dict[str, Any]:
    reasoning, content, finish, usage = "", "", None, None
    args: dict[int, str] = {}
    for c in chunks(lines):
        delta = c["choices"][0]["delta"]
        reasoning += delta.get("reasoning_content") or ""
        content += delta.get("content") or ""
        for tc in delta.get("tool_calls") or ():
            args[tc["index"]] = args.get(tc["index"], "") + (tc.get("function") or {}).get("arguments", "")
        finish = c["choices"][0]["finish_reason"] or finish
        usage = c["usage"] or usage
    return {"reasoning": reasoning, "content": content, "args": args, "finish": finish, "usage": usage}


async def test_a_scripted_stream_has_deepseeks_shape() -> None:
    s = script({"reasoning": "I will read it.", "tool_calls": [CALL]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        status, lines = await read_stream(client, body())
    assert status == 200 and lines[-1] == "data: [DONE]"
    cs = chunks(lines)
    assert cs[0]["choices"][0]["delta"] == {"role": "assistant", "content": None, "reasoning_content": ""}
    first_call = next(c for c in cs if c["choices"][0]["delta"].get("tool_calls"))
    tc = first_call["choices"][0]["delta"]["tool_calls"][0]
    assert tc["function"] == {"name": "read_file", "arguments": ""} and tc["id"].startswith("call_00_")
    assert all(c["usage"] is None for c in cs[:-1]) and cs[-1]["usage"]["prompt_tokens"] > 0
    got = assembled(lines)
    assert got["reasoning"] == "I will read it." and got["finish"] == "tool_calls"
    assert json.loads(got["args"][0]) == {"path": "src/app.py"}
    fragments = [
        c for c in cs if (c["choices"][0]["delta"].get("tool_calls") or [{}])[0].get("function", {}).get("arguments")
    ]
    assert len(fragments) > 3


async def test_replies_follow_the_script_and_running_out_names_the_session() -> None:
    s = script({"content": "one"}, {"content": "two"})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url, headers=AUTH) as client:
        for expected in ("one", "two"):
            r = await client.post("/chat/completions", json=body(stream=False))
            assert r.json()["choices"][0]["message"]["content"] == expected
        r = await client.post("/chat/completions", json=body(stream=False))
        assert r.status_code == 500
        assert "'executor'" in r.json()["error"]["message"] and "ran out" in r.json()["error"]["message"]
        other = await client.post("/chat/completions", json=body(stream=False, system="You are someone else."))
        assert other.status_code == 500 and "no session" in other.json()["error"]["message"]
        emu.reset()
        r = await client.post("/chat/completions", json=body(stream=False))
        assert r.json()["choices"][0]["message"]["content"] == "one"


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_an_http_status_fault_fails_n_times_then_delivers_the_same_reply(status: int) -> None:
    s = script({"content": "finally", "faults": [{"kind": "http_status", "status": status, "times": 2}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url, headers=AUTH) as client:
        for _ in range(2):
            r = await client.post("/chat/completions", json=body(stream=False))
            assert r.status_code == status
            assert set(r.json()["error"]) == {"message", "type", "param", "code"}
            if status == 429:
                assert r.headers["retry-after"] == "1"
        r = await client.post("/chat/completions", json=body(stream=False))
        assert r.json()["choices"][0]["message"]["content"] == "finally"
        assert emu.stats()["sessions"]["executor"]["faults_injected"] == {f"http_{status}": 2}


async def test_a_dropped_stream_ends_after_k_chunks_and_the_retry_gets_the_reply() -> None:
    s = script(
        {"reasoning": "Thinking hard about it.", "content": "done", "faults": [{"kind": "drop", "after_chunks": 3}]}
    )
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        lines: list[str] = []
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("POST", "/chat/completions", json=body(), headers=AUTH) as r:
                async for line in r.aiter_lines():
                    if line:
                        lines.append(line)
        assert len(lines) == 3 and "data: [DONE]" not in lines
        status, again = await read_stream(client, body())
        assert status == 200 and assembled(again)["content"] == "done"
        assert emu.stats()["total"]["faults_injected"] == {"drop": 1}


async def test_a_stall_times_the_client_out_and_the_retry_gets_the_reply(autojump_clock: trio.abc.Clock) -> None:
    s = script({"content": "slow", "faults": [{"kind": "stall", "seconds": 30, "after_chunks": 1}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url, timeout=10) as client:
        start = trio.current_time()
        with pytest.raises(httpx.ReadTimeout):
            await read_stream(client, body())
        assert 10 <= trio.current_time() - start < 30
        _, lines = await read_stream(client, body())
        assert assembled(lines)["content"] == "slow"


async def test_a_continuing_stall_delivers_late(autojump_clock: trio.abc.Clock) -> None:
    s = script({"content": "late", "faults": [{"kind": "stall", "seconds": 7, "then": "continue"}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url, timeout=60) as client:
        start = trio.current_time()
        r = await client.post("/chat/completions", json=body(stream=False), headers=AUTH)
        assert r.json()["choices"][0]["message"]["content"] == "late"
        assert trio.current_time() - start >= 7


async def test_keep_alive_comments_come_before_the_first_chunk(autojump_clock: trio.abc.Clock) -> None:
    s = script({"content": "hi", "faults": [{"kind": "keep_alive", "count": 4, "interval": 2}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        _, lines = await read_stream(client, body())
    assert lines[:4] == [": keep-alive"] * 4 and lines[4].startswith("data: {")
    assert assembled(lines)["content"] == "hi"


async def test_truncated_arguments_end_with_length() -> None:
    s = script({"tool_calls": [CALL], "faults": [{"kind": "truncate_arguments", "keep_chars": 12}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        _, lines = await read_stream(client, body())
    got = assembled(lines)
    assert got["finish"] == "length" and got["args"][0] == json.dumps(CALL["arguments"])[:12]


@pytest.mark.parametrize(
    ("kind", "field"), [("tool_call_in_reasoning", "reasoning"), ("tool_call_in_content", "content")]
)
async def test_leaked_tool_calls_carry_the_markup_and_no_tool_calls(kind: str, field: str) -> None:
    s = script({"reasoning": "Let me look.", "tool_calls": [CALL], "faults": [{"kind": kind}]})
    async with open_emulator(script=s) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        _, lines = await read_stream(client, body())
    got = assembled(lines)
    assert got["args"] == {} and got["finish"] == "stop"
    assert f"{CALL_BEGIN}function{TOOL_SEP}read_file\n```json\n" + json.dumps(CALL["arguments"]) in got[field]


async def test_the_latency_model_delays_the_first_token_by_miss_tokens(autojump_clock: trio.abc.Clock) -> None:
    from scenarios.emulator import LatencyModel

    latency = LatencyModel(ttft=1.0, miss_ms_per_ktok=1000.0, tps=1000.0)
    big = body(stream=False, system="You are the EXECUTOR. " + "Rules. " * 3000)
    async with open_emulator(latency=latency) as emu, httpx.AsyncClient(base_url=emu.base_url, timeout=60) as client:
        start = trio.current_time()
        first = await client.post("/chat/completions", json=big, headers=AUTH)
        cold = trio.current_time() - start
        start = trio.current_time()
        await client.post("/chat/completions", json=big, headers=AUTH)
        warm = trio.current_time() - start
    assert first.json()["usage"]["prompt_cache_miss_tokens"] > 3000
    assert cold > warm + 2.5 and warm >= 1.0


def test_scripts_are_validated_and_loaded_from_json_and_toml(tmp_path: Any) -> None:
    p = tmp_path / "s.toml"
    p.write_text('[[sessions]]\nkey = "a"\n[[sessions.replies]]\ncontent = "x"\n', encoding="utf-8")
    assert Script.load(p).sessions[0].replies[0].content == "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sessions": [{"key": "a"}, {"key": "a"}]}), encoding="utf-8")
    with pytest.raises(ScriptInvalid, match="unique"):
        Script.load(bad)
    with pytest.raises(ScriptInvalid, match="kind"):
        Script.parse({"sessions": [{"key": "a", "replies": [{"faults": [{"kind": "explode"}]}]}]})
