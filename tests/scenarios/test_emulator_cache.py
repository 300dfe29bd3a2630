"""Cache accounting of the emulator, driven by a plain HTTP client (httpx), as the issue's acceptance asks."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.emulator import Script, open_emulator
from scenarios.emulator.accounting import Accountant
from scenarios.emulator.render import render_request
from sessions.accounting import tokens

AUTH = {"Authorization": "Bearer test-key"}
FLASH = "deepseek-v4-flash"
SYSTEM = "You are a careful coding agent working in a repository. " + "Follow the house rules exactly. " * 150
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}},
        },
    }
]
LONG_TEXT = " ".join(f"line {i}: value = compute(alpha_{i}, beta_{i})" for i in range(120))
SCRIPT = Script.model_validate(
    {
        "sessions": [
            {
                "key": "agent",
                "replies": [
                    {
                        "reasoning": "The user wants the file written. I will call write_file.",
                        "content": "",
                        "tool_calls": [{"name": "write_file", "arguments": {"path": "out.txt", "text": LONG_TEXT}}],
                    },
                    {"reasoning": "Done.", "content": "The file is written."},
                    {"reasoning": "Done.", "content": "The file is written."},
                ],
            }
        ]
    }
)


def request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": FLASH, "messages": messages, "stream": False, **extra}


async def post(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    r = await client.post("/chat/completions", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def check_usage(usage: dict[str, Any], unit: int = 128) -> int:
    hit = usage["prompt_cache_hit_tokens"]
    assert hit % unit == 0
    assert hit + usage["prompt_cache_miss_tokens"] == usage["prompt_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == hit
    return int(hit)


async def test_a_shared_long_prefix_hits_in_whole_units() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        first = await post(client, request([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "A"}]))
        assert check_usage(first["usage"]) == 0
        second = await post(client, request([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "B"}]))
        hit = check_usage(second["usage"])
        system_tokens = tokens.count(SYSTEM)
        assert hit >= system_tokens - 128 and hit >= 768
        assert hit < second["usage"]["prompt_tokens"]


async def test_one_byte_changed_at_the_start_hits_nothing() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        await post(client, request([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "A"}]))
        changed = "y" + SYSTEM[1:]
        again = await post(client, request([{"role": "system", "content": changed}, {"role": "user", "content": "A"}]))
        assert check_usage(again["usage"]) == 0
        assert emu.stats()["total"]["ideal_hit_tokens"] < 20  # only the template head is shared


async def test_the_same_prefix_on_another_model_misses() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "A"}]
        await post(client, request(msgs))
        pro = await post(client, {**request(msgs), "model": "deepseek-v4-pro"})
        assert check_usage(pro["usage"]) == 0


async def _tool_turn(reserialize: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    async with open_emulator(script=SCRIPT) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        msgs: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Write out.txt"},
        ]
        first = await post(client, request(msgs, tools=TOOLS))
        message = first["choices"][0]["message"]
        call = message["tool_calls"][0]
        arguments = call["function"]["arguments"]
        if reserialize:
            arguments = json.dumps(json.loads(arguments), separators=(",", ":"), sort_keys=True)
        assistant = {
            "role": "assistant",
            "content": message["content"],
            "reasoning_content": message["reasoning_content"],
            "tool_calls": [
                {"id": call["id"], "type": "function", "function": {**call["function"], "arguments": arguments}}
            ],
        }
        tool = {"role": "tool", "tool_call_id": call["id"], "content": "ok"}
        second = await post(client, request([*msgs, assistant, tool], tools=TOOLS))
        return first["usage"], second["usage"]


async def test_an_assistant_reply_resent_exactly_hits_its_own_tokens() -> None:
    first, second = await _tool_turn(reserialize=False)
    sent_and_generated = first["prompt_tokens"] + first["completion_tokens"]
    assert check_usage(second) == sent_and_generated - sent_and_generated % 128
    assert check_usage(second) > first["prompt_tokens"]


async def test_an_assistant_reply_resent_with_reserialized_arguments_misses_them() -> None:
    first, exact = await _tool_turn(reserialize=False)
    _, reserialized = await _tool_turn(reserialize=True)
    args_tokens = tokens.count(json.dumps({"path": "out.txt", "text": LONG_TEXT}, ensure_ascii=False))
    assert args_tokens > 1000
    assert check_usage(reserialized) <= first["prompt_tokens"] + (first["completion_tokens"] - args_tokens) + 128
    assert check_usage(exact) - check_usage(reserialized) >= args_tokens - 256


async def test_stats_report_hits_against_the_ideal_and_reset_clears_them() -> None:
    async with open_emulator(cache_unit=64) as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "A"}]
        one = await post(client, request(msgs))
        two = await post(client, request(msgs))
        assert check_usage(two["usage"], unit=64) == one["usage"]["prompt_tokens"] // 64 * 64
        stats = (await client.get("/emulator/stats")).json()
        model = stats["models"][FLASH]
        assert model["requests"] == 2
        assert model["prompt_tokens"] == 2 * one["usage"]["prompt_tokens"]
        assert model["hit_tokens"] == two["usage"]["prompt_cache_hit_tokens"]
        assert model["ideal_hit_tokens"] == one["usage"]["prompt_tokens"]
        assert 0 < model["efficiency"] <= 1
        assert stats["cache_unit"] == 64
        assert (await client.post("/emulator/reset")).status_code == 200
        assert emu.stats()["total"]["requests"] == 0
        three = await post(client, request(msgs))
        assert three["usage"]["prompt_cache_hit_tokens"] == 0


async def test_reset_can_keep_the_cache() -> None:
    async with open_emulator() as emu, httpx.AsyncClient(base_url=emu.base_url) as client:
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "A"}]
        await post(client, request(msgs))
        r = await client.post("/emulator/reset", json={"cache": False})
        assert r.status_code == 200
        again = await post(client, request(msgs))
        assert again["usage"]["prompt_cache_hit_tokens"] > 0
        assert emu.stats()["total"]["requests"] == 1


# ----------------------------------------------------------------------- the accounting layer against a naive model

PIECES = ["alpha beta gamma " * 7, "delta epsilon " * 11, "zeta", "eta theta iota kappa " * 5, "lambda mu"]
message = st.builds(
    lambda role, parts: {"role": role, "content": "".join(PIECES[i] for i in parts)},
    st.sampled_from(["user", "tool_like_user"]).map(lambda r: "user"),
    st.lists(st.integers(0, len(PIECES) - 1), min_size=0, max_size=4),
)
conversation = st.lists(message, min_size=1, max_size=6)


def _tokens_of(accountant: Accountant, body: dict[str, Any]) -> list[int]:
    out: list[int] = []
    for text in render_request(body, thinking=True):
        out.extend(tokens.encode(text))
    return out


def _naive_lcp(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@settings(max_examples=60, deadline=None)
@given(st.lists(conversation, min_size=1, max_size=5), st.sampled_from([1, 8, 64]))
def test_hits_are_the_longest_shared_prefix_rounded_down_to_the_unit(convs: list[Any], unit: int) -> None:
    accountant = Accountant(unit)
    seen: list[list[int]] = []
    for messages in convs:
        body = {"model": FLASH, "messages": [{"role": "system", "content": "S"}, *messages]}
        toks = _tokens_of(accountant, body)
        lookup, _ = accountant.account_input(FLASH, body, thinking=True)
        ideal = max((_naive_lcp(toks, s) for s in seen), default=0)
        assert lookup.prompt_tokens == len(toks)
        assert lookup.ideal_hit_tokens == ideal
        assert lookup.hit_tokens == ideal - ideal % unit
        seen.append(toks)
