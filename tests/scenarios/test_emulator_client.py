"""The emulator against our own client (sessions/wire/client.py): recorded DeepSeek samples and the emulator's streams
assemble the same way, and every fault kind shows the client's reaction."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import trio

from scenarios.emulator import Script, open_emulator
from scenarios.emulator.render import CALL_BEGIN
from sessions.repair.scavenge import scavenge_calls
from sessions.wire.client import DeepSeekClient
from sessions.wire.errors import (
    AuthenticationError,
    BadRequestError,
    DeepSeekError,
    InvalidParameterError,
    RetriesExhaustedError,
)
from sessions.wire.messages import (
    AssistantMessage,
    ChatCompletion,
    ChatRequest,
    FunctionSchema,
    Message,
    SystemMessage,
    ToolMessage,
    ToolSchema,
    UserMessage,
)
from sessions.wire.stream import (
    Completed,
    KeepAlive,
    StreamEvent,
    StreamRestarted,
    assemble_sse,
    reply_from_completion,
)
from tests import wire_samples
from tests.support.client import FAST, collect, raw_sse

WIRE = wire_samples.WIRE
needs_samples = pytest.mark.skipif(not WIRE.is_dir(), reason="the recorded DeepSeek samples are not on this machine")

SYSTEM = SystemMessage(content="You are the EXECUTOR. " + "Keep edits small and verify them. " * 80)
WEATHER = ToolSchema(
    function=FunctionSchema(
        name="weather",
        description="Current weather for a location.",
        parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    )
)


def request(*messages: Message, stream: bool = True, **extra: Any) -> ChatRequest:
    return ChatRequest(
        model="deepseek-v4-flash", messages=(SYSTEM, *messages), tools=(WEATHER,), stream=stream, **extra
    )


def one_session(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "system_contains": "EXECUTOR", "replies": replies}]})


def shape(events: list[StreamEvent]) -> list[str]:
    """The event sequence with runs of one kind folded: what a renderer sees, independent of fragment sizes."""
    return [kind for kind, _ in itertools.groupby(e.kind for e in events)]


# --------------------------------------------------------------------------------- samples vs emulator streams


@needs_samples
async def test_the_recorded_stream_and_the_emulators_stream_assemble_identically() -> None:
    recorded_events, recorded = assemble_sse((WIRE / "v4flash_thinking_toolcall.sse").read_bytes())
    call = recorded.message.tool_calls[0]
    script = one_session(
        {
            "reasoning": recorded.message.reasoning_content,
            "content": recorded.message.content or "",
            "tool_calls": [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}],
            "finish_reason": recorded.finish_reason,
        }
    )
    user = UserMessage(content="What is the weather in San Francisco?")
    async with open_emulator(script=script) as emu:
        emulated_events, emulated = assemble_sse(await raw_sse(emu.base_url, request(user)))
    assert (
        shape(emulated_events)
        == shape(recorded_events)
        == ["reasoning_delta", "tool_call_started", "tool_call_arguments_delta", "completed"]
    )
    assert emulated.message == recorded.message
    assert emulated.finish_reason == recorded.finish_reason == "tool_calls"
    fragments = [e.text for e in emulated_events if e.kind == "tool_call_arguments_delta"]
    assert fragments == [e.text for e in recorded_events if e.kind == "tool_call_arguments_delta"]
    assert recorded.usage is not None and emulated.usage is not None
    assert set(emulated.usage.model_dump()) == set(recorded.usage.model_dump())


@needs_samples
async def test_the_recorded_json_reply_and_the_emulators_assemble_identically() -> None:
    recorded = reply_from_completion(
        ChatCompletion.model_validate_json((WIRE / "v4flash_toolcall_nonstream.json").read_bytes())
    )
    call = recorded.message.tool_calls[0]
    script = one_session(
        {
            "reasoning": recorded.message.reasoning_content,
            "tool_calls": [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}],
        }
    )
    async with open_emulator(script=script) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
        emulated = await client.complete(request(UserMessage(content="weather?"), stream=False))
    assert emulated.message == recorded.message
    assert emulated.finish_reason == recorded.finish_reason


async def test_streamed_and_json_replies_of_the_emulator_agree_through_the_client() -> None:
    reply = {
        "reasoning": "Check the weather.",
        "content": "",
        "tool_calls": [{"name": "weather", "arguments": {"location": "Oslo"}}],
    }
    script = one_session(reply, reply)
    async with open_emulator(script=script) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
        streamed = await client.complete(request(UserMessage(content="weather?")))
        emu.reset()
        whole = await client.complete(request(UserMessage(content="weather?"), stream=False))
    assert streamed.message == whole.message
    assert streamed.usage == whole.usage


async def test_a_conversation_built_from_the_clients_replies_hits_everything_it_resends() -> None:
    script = one_session(
        {"reasoning": "Look it up.", "tool_calls": [{"name": "weather", "arguments": {"location": "Oslo " * 200}}]},
        {"reasoning": "Answer.", "content": "It is cold in Oslo."},
    )
    async with open_emulator(script=script) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
        first_req = request(UserMessage(content="weather in Oslo?"))
        first = await client.complete(first_req)
        call = first.message.tool_calls[0]
        second_req = request(*first_req.messages[1:], first.message, ToolMessage(tool_call_id=call.id, content="-3 C"))
        second = await client.complete(second_req)
        assert first.usage is not None and second.usage is not None
        resent = first.usage.prompt_tokens + first.usage.completion_tokens
        assert second.usage.prompt_cache_hit_tokens == resent - resent % 128
        assert emu.stats()["sessions"]["executor"]["efficiency"] > 0.85


# ----------------------------------------------------------------------------------------- faults vs the client


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_http_status_faults_are_retried(status: int, autojump_clock: trio.abc.Clock) -> None:
    script = one_session({"content": "ok", "faults": [{"kind": "http_status", "status": status, "times": 2}]})
    async with (
        open_emulator(script=script) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        events = await collect(client, request(UserMessage(content="hi")))
    restarts = [e for e in events if isinstance(e, StreamRestarted)]
    assert [r.attempt for r in restarts] == [2, 3]
    assert isinstance(events[-1], Completed) and events[-1].reply.message.content == "ok"


async def test_a_status_fault_that_never_ends_exhausts_the_retries(autojump_clock: trio.abc.Clock) -> None:
    script = one_session({"content": "never", "faults": [{"kind": "http_status", "status": 503, "times": 99}]})
    async with (
        open_emulator(script=script) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        with pytest.raises(RetriesExhaustedError):
            await client.complete(request(UserMessage(content="hi")))
        assert emu.stats()["total"]["faults_injected"] == {"http_503": FAST.max_attempts}


async def test_a_dropped_stream_is_retried_and_the_partial_output_voided(autojump_clock: trio.abc.Clock) -> None:
    script = one_session(
        {
            "reasoning": "Several words of reasoning here.",
            "content": "whole",
            "faults": [{"kind": "drop", "after_chunks": 4}],
        }
    )
    async with (
        open_emulator(script=script) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        events = await collect(client, request(UserMessage(content="hi")))
    restart = next(e for e in events if isinstance(e, StreamRestarted))
    assert restart.discarded_events == 3  # the role delta carries no event; three reasoning fragments did
    assert isinstance(events[-1], Completed) and events[-1].reply.message.content == "whole"


async def test_a_stalled_stream_times_out_and_is_retried(autojump_clock: trio.abc.Clock) -> None:
    script = one_session(
        {"content": "after the stall", "faults": [{"kind": "stall", "seconds": 300, "after_chunks": 2}]}
    )
    async with (
        open_emulator(script=script) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        start = trio.current_time()
        events = await collect(client, request(UserMessage(content="hi")))
        assert trio.current_time() - start < 300
    assert any(isinstance(e, StreamRestarted) and "no data" in e.reason for e in events)
    assert isinstance(events[-1], Completed) and events[-1].reply.message.content == "after the stall"


async def test_keep_alive_comments_reach_the_client_before_any_delta(autojump_clock: trio.abc.Clock) -> None:
    script = one_session({"content": "hi", "faults": [{"kind": "keep_alive", "count": 3, "interval": 5}]})
    async with (
        open_emulator(script=script) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        events = await collect(client, request(UserMessage(content="hi")))
    assert [type(e) for e in events[:3]] == [KeepAlive] * 3
    assert not any(isinstance(e, StreamRestarted) for e in events)


async def test_truncated_arguments_reach_the_client_with_finish_reason_length() -> None:
    script = one_session(
        {
            "tool_calls": [{"name": "weather", "arguments": {"location": "Oslo"}}],
            "faults": [{"kind": "truncate_arguments"}],
        }
    )
    async with open_emulator(script=script) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
        reply = await client.complete(request(UserMessage(content="hi")))
    assert reply.finish_reason == "length"
    args = reply.message.tool_calls[0].function.arguments
    assert json.dumps({"location": "Oslo"}).startswith(args) and len(args) < len(json.dumps({"location": "Oslo"}))


@pytest.mark.parametrize("kind", ["tool_call_in_reasoning", "tool_call_in_content"])
async def test_leaked_tool_calls_reach_the_client_as_markup_for_the_repair_layer(kind: str) -> None:
    script = one_session(
        {
            "reasoning": "Call it.",
            "tool_calls": [{"name": "weather", "arguments": {"location": "Oslo"}}],
            "faults": [{"kind": kind}],
        }
    )
    async with open_emulator(script=script) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
        reply = await client.complete(request(UserMessage(content="hi")))
    assert reply.message.tool_calls == () and reply.finish_reason == "stop"
    where = reply.message.reasoning_content if kind == "tool_call_in_reasoning" else reply.message.content
    assert where is not None and CALL_BEGIN in where and '{"location": "Oslo"}' in where
    found = scavenge_calls(
        content=reply.message.content, reasoning=reply.message.reasoning_content, known_tools={"weather"}
    )
    assert [(c.name, c.args, c.source) for c in found] == [
        ("weather", {"location": "Oslo"}, "reasoning" if kind == "tool_call_in_reasoning" else "content")
    ]


async def test_refusals_are_not_retried() -> None:
    async with open_emulator() as emu:
        async with DeepSeekClient(base_url=emu.base_url, api_key=None) as anonymous:
            with pytest.raises(AuthenticationError):
                await anonymous.complete(request(UserMessage(content="hi")))
        async with DeepSeekClient(base_url=emu.base_url, api_key="k") as client:
            with pytest.raises(InvalidParameterError):
                await client.complete(request(UserMessage(content="hi"), temperature=3.0))
            naked = AssistantMessage(content="", tool_calls=())
            req = request(UserMessage(content="a"), naked, UserMessage(content="b"))
            body = json.dumps(
                {
                    "model": req.model,
                    "stream": True,
                    "tools": [WEATHER.to_wire()],
                    "messages": [m.to_wire() for m in req.messages],
                }
            ).encode()
            with pytest.raises(BadRequestError, match="reasoning_content in the thinking mode"):
                await client.complete(req, body=body)
        assert emu.stats()["total"]["requests"] == 0  # refused before any session was charged


async def test_a_script_that_runs_out_surfaces_as_a_server_error_naming_the_session(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with (
        open_emulator(script=one_session()) as emu,
        DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client,
    ):
        with pytest.raises(DeepSeekError, match="executor"):
            await client.complete(request(UserMessage(content="hi")))
