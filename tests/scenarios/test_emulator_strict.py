"""The emulator is as strict as DeepSeek (DESIGN §6 "How strict the emulator is"): each rule's violation is a 400
with DeepSeek's own message, and the request that keeps the rule is served."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from scenarios.emulator import ModelLimits, open_emulator
from scenarios.emulator.validation import REASONING_ROUND_TRIP

AUTH = {"Authorization": "Bearer test-key"}
TOOL = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}}}
LIMITS = ModelLimits(context_window=400, max_output_tokens=8192)


def _call(cid: str, reasoning: str | None = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": cid, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}],
    }
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    return out


def _tool(cid: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": "x"}


USER = {"role": "user", "content": "read it"}
ANSWERED = [USER, _call("c1"), _tool("c1")]


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "deepseek-v4-flash", "messages": messages, "tools": [TOOL], **extra}


UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "(insufficient tool messages following tool_calls message)"
)
UNASKED = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
LONG = "word " * 600

TABLE = [
    ("a call answered by nothing before the next user message", body([USER, _call("c1"), USER]), UNANSWERED),
    (
        "a call answered by nothing before the next assistant message",
        body([USER, _call("c1"), _call("c2")]),
        UNANSWERED,
    ),
    ("a call answered by nothing at the end", body([USER, _call("c1")]), UNANSWERED),
    ("a tool message that answers no call", body([USER, _tool("c9")]), UNASKED),
    ("a tool message for another call", body([USER, _call("c1"), _tool("c2")]), UNASKED),
    ("a call answered twice", body([*ANSWERED, _tool("c1")]), UNASKED),
    (
        "no reasoning_content on a thinking tool turn",
        body([USER, _call("c1", None), _tool("c1")]),
        REASONING_ROUND_TRIP,
    ),
    (
        "a prompt past the context window",
        body([{"role": "user", "content": LONG}]),
        "This model's maximum context length is 400 tokens. However, you requested {m} tokens ({p} in the messages, "
        "0 in the completion). Please reduce the length of the messages or completion.",
    ),
    (
        "a completion that no longer fits",
        body(ANSWERED, max_tokens=390),
        "This model's maximum context length is 400 tokens. However, you requested {m} tokens ({p} in the messages, "
        "390 in the completion). Please reduce the length of the messages or completion.",
    ),
    (
        "max_tokens 0",
        body(ANSWERED, max_tokens=0),
        "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]",
    ),
    (
        "max_tokens past the output limit",
        body(ANSWERED, max_tokens=8193),
        "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]",
    ),
]


async def _post(payload: dict[str, Any]) -> httpx.Response:
    async with open_emulator(limits=LIMITS) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        return await client.post("/chat/completions", json=payload, headers=AUTH)


@pytest.mark.parametrize(("rule", "payload", "message"), TABLE, ids=[row[0] for row in TABLE])
async def test_each_rule_broken_is_a_400_with_deepseeks_message(rule: str, payload: Any, message: str) -> None:
    r = await _post(payload)
    assert r.status_code == 400, (rule, r.text)
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error"
    if "{m}" in message:
        words = error["message"].split()
        requested = int(words[words.index("requested") + 1])
        prompt = int(error["message"].split("(")[1].split()[0])
        assert requested > LIMITS.context_window
        message = message.format(m=requested, p=prompt)
    assert error["message"] == message


@pytest.mark.parametrize(
    "payload",
    [
        body(ANSWERED),
        body([*ANSWERED, USER]),
        body(
            [
                USER,
                {**_call("c1"), "tool_calls": [*_call("a")["tool_calls"], *_call("b")["tool_calls"]]},
                _tool("b"),
                _tool("a"),
            ]
        ),
        body(ANSWERED, max_tokens=8192 - 8000),
        body(ANSWERED, max_tokens=1),
    ],
    ids=["answered", "a user turn after the results", "results in any order", "room left", "max_tokens 1"],
)
async def test_a_request_that_keeps_every_rule_is_served(payload: Any) -> None:
    r = await _post(payload)
    assert r.status_code == 200, r.text
