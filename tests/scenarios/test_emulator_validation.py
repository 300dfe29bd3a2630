"""The emulator refuses what DeepSeek refuses, in DeepSeek's error shape (DESIGN §4)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from scenarios.emulator import open_emulator
from scenarios.emulator.validation import REASONING_ROUND_TRIP

AUTH = {"Authorization": "Bearer test-key"}
TOOL = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}}}
ASSISTANT_NO_REASONING = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}],
}


def body(**extra: Any) -> dict[str, Any]:
    return {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hi"}], **extra}


async def call(payload: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> httpx.Response:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        if raw is not None:
            return await client.post("/chat/completions", content=raw, headers=headers or AUTH)
        return await client.post("/chat/completions", json=payload, headers=AUTH if headers is None else headers)


def error_of(r: httpx.Response) -> dict[str, Any]:
    err: dict[str, Any] = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    return err


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"}])
async def test_a_missing_or_empty_key_is_401(headers: dict[str, str]) -> None:
    r = await call(body(), headers=headers)
    assert r.status_code == 401
    assert error_of(r)["type"] == "authentication_error"


async def test_a_key_the_script_rejects_is_401_as_deepseek_answers_a_bad_key() -> None:
    from scenarios.emulator import Script

    script = Script.parse({"reject_keys": ["sk-revoked-1234"], "sessions": []})
    async with open_emulator(script=script) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        for path in ("/chat/completions", "/models"):
            bad = {"Authorization": "Bearer sk-revoked-1234"}
            r = await (client.post(path, json=body(), headers=bad) if "chat" in path else client.get(path, headers=bad))
            assert r.status_code == 401
            assert error_of(r)["message"] == "Authentication Fails, Your api key: ****1234 is invalid"
        assert (await client.get("/models", headers=AUTH)).status_code == 200  # any other key still works


async def test_malformed_json_is_400() -> None:
    r = await call(None, raw=b'{"model": "deepseek-v4-flash", "messages": [')
    assert r.status_code == 400
    assert "deserialize" in error_of(r)["message"]


@pytest.mark.parametrize(
    "payload",
    [
        body(messages=[{"role": "robot", "content": "hi"}]),
        body(messages=[]),
        body(messages=[{"role": "tool", "content": "x"}]),
        body(model="gpt-4"),
        body(thinking={"type": "sometimes"}),
        [1, 2],
    ],
)
async def test_broken_requests_are_400(payload: Any) -> None:
    r = await call(payload)
    assert r.status_code == 400, r.text
    assert error_of(r)["type"] == "invalid_request_error"


async def test_a_missing_reasoning_content_with_tools_is_400_with_deepseeks_message() -> None:
    msgs = [
        {"role": "user", "content": "read"},
        ASSISTANT_NO_REASONING,
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]
    r = await call(body(messages=msgs, tools=[TOOL]))
    assert r.status_code == 400
    assert (
        error_of(r)["message"]
        == REASONING_ROUND_TRIP
        == ("The reasoning_content in the thinking mode must be passed back to the API.")
    )


async def test_reasoning_content_is_not_needed_without_tools_or_thinking() -> None:
    msgs = [
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "go"},
    ]
    assert (await call(body(messages=msgs))).status_code == 200
    tool_msgs = [*msgs[:1], ASSISTANT_NO_REASONING, {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    assert (await call(body(messages=tool_msgs, tools=[TOOL], thinking={"type": "disabled"}))).status_code == 200


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "read_file"}}])
async def test_forcing_a_tool_in_thinking_mode_is_400(choice: Any) -> None:
    r = await call(body(tools=[TOOL], tool_choice=choice))
    assert r.status_code == 400
    assert error_of(r)["param"] == "tool_choice"
    assert (await call(body(tools=[TOOL], tool_choice=choice, thinking={"type": "disabled"}))).status_code == 200


@pytest.mark.parametrize(
    "extra",
    [{"temperature": 2.5}, {"temperature": "hot"}, {"top_p": 1.5}, {"presence_penalty": -3}],
)
async def test_out_of_range_parameters_are_422(extra: dict[str, Any]) -> None:
    r = await call(body(**extra))
    assert r.status_code == 422
    assert error_of(r)["param"] == next(iter(extra))


async def test_models_and_unknown_paths() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url, headers=AUTH) as client:
        for path in ("/models", "/v1/models"):
            ids = [m["id"] for m in (await client.get(path)).json()["data"]]
            assert "deepseek-v4-flash" in ids and "deepseek-v4-pro" in ids
        assert (await client.get("/models", headers={"Authorization": ""})).status_code == 401
        assert (await client.get("/nowhere")).status_code == 404
        assert (await client.get("/chat/completions")).status_code == 405
        ok = await client.post("/v1/chat/completions", json=body())
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"]


async def test_keep_alive_connections_serve_many_requests() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url, headers=AUTH) as client:
        for _ in range(5):
            assert (await client.post("/chat/completions", json=body())).status_code == 200
            assert (await client.post("/chat/completions", json=body(temperature=9))).status_code == 422
        assert emu.stats()["total"]["requests"] == 5
