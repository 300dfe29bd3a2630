import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.wire.errors import ProtocolError, ServerError, StreamBrokenError
from sessions.wire.messages import ChatCompletion, StreamChunk, encode_message
from sessions.wire.sse import SseData, parse_sse
from sessions.wire.stream import (
    EVENT_ADAPTER,
    Completed,
    ContentDelta,
    KeepAlive,
    ReasoningDelta,
    StreamAssembler,
    ToolCallArgumentsDelta,
    ToolCallStarted,
    assemble_sse,
    decode_chunk,
    events_of_reply,
    reply_from_completion,
)
from tests.sessions.fake_deepseek import V4_JSON, V4_SSE, V32_SSE
from tests.support.wire_replies import (
    V4_ARGS,
    V4_REASONING,
    assert_v4_json_reply,
    assert_v4_stream_reply,
    assert_v32_stream_reply,
)


def test_v4_thinking_toolcall_sample() -> None:
    events, reply = assemble_sse(V4_SSE.read_bytes())
    assert_v4_stream_reply(reply)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == V4_REASONING
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(index=0, id="call_00_IhCAliIHtM9gKpgfqbBV9873", name="weather")
    ]
    fragments = [e.text for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert len(fragments) > 3 and "".join(fragments) == V4_ARGS
    assert not any(isinstance(e, ContentDelta) for e in events)  # content "" carries no delta
    # Reasoning streams first, then the call; the last event is the whole reply.
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ToolCallStarted))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_call])
    assert events[-1] == Completed(reply=reply)


def test_v32_parallel_toolcalls_sample() -> None:
    events, reply = assemble_sse(V32_SSE.read_bytes())
    assert_v32_stream_reply(reply)
    started = [e.index for e in events if isinstance(e, ToolCallStarted)]
    assert started == [0, 1]
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "我可以帮。"


def test_v4_nonstream_sample() -> None:
    reply = reply_from_completion(ChatCompletion.model_validate_json(V4_JSON.read_bytes()))
    assert_v4_json_reply(reply)
    events = events_of_reply(reply)
    assert events[0] == ReasoningDelta(text=reply.message.reasoning_content or "")
    assert events[1:] == [
        ToolCallStarted(index=0, id="call_00_lCIkdHRa7AKmCG3TlxXz1061", name="weather"),
        ToolCallArgumentsDelta(index=0, text=V4_ARGS),
    ]


def test_assembled_message_re_encodes_raw_arguments_and_reasoning_unchanged() -> None:
    _, reply = assemble_sse(V4_SSE.read_bytes())
    encoded = encode_message(reply.message)
    assert json.dumps(V4_ARGS, ensure_ascii=False).encode() in encoded
    assert b'"reasoning_content":' + json.dumps(V4_REASONING).encode() in encoded


def test_a_stream_without_finish_reason_is_broken() -> None:
    items = [i for i in parse_sse(V4_SSE.read_bytes()) if isinstance(i, SseData)]
    assembler = StreamAssembler()
    for item in items[:-1]:  # everything but the chunk that carries finish_reason and usage
        assembler.feed(decode_chunk(item.payload))
    assert not assembler.finished
    with pytest.raises(StreamBrokenError, match="without a finish reason"):
        assembler.finish()


def test_a_tool_call_fragment_before_its_id_is_a_protocol_error() -> None:
    chunk = StreamChunk.model_validate(
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}}]}
    )
    with pytest.raises(ProtocolError, match="no id"):
        StreamAssembler().feed(chunk)


def test_garbage_and_error_payloads() -> None:
    with pytest.raises(ProtocolError, match="does not parse"):
        decode_chunk("{not json")
    with pytest.raises(ServerError, match="boom"):
        decode_chunk('{"error":{"message":"boom","type":"server_error"}}')


def test_events_round_trip_as_json_lines() -> None:
    events, _ = assemble_sse(b": keep-alive\n\n" + V4_SSE.read_bytes())
    assert events[0] == KeepAlive()
    lines = [EVENT_ADAPTER.dump_json(e) for e in events]
    assert [EVENT_ADAPTER.validate_json(line) for line in lines] == events
    assert json.loads(lines[-1])["kind"] == "completed"


@given(
    args=st.text(min_size=0, max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=12),
    reasoning=st.one_of(st.none(), st.text(max_size=40)),
)
def test_fragments_concatenate_exactly(args: str, cuts: list[int], reasoning: str | None) -> None:
    points = sorted({min(c, len(args)) for c in cuts})
    pieces = [args[a:b] for a, b in zip([0, *points], [*points, len(args)], strict=True)]
    chunks: list[dict[str, Any]] = [
        {"choices": [{"delta": {"role": "assistant", "content": None, "reasoning_content": reasoning}}]}
    ]
    chunks.append(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
                        ]
                    }
                }
            ]
        }
    )
    for piece in pieces:
        chunks.append({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}]})
    chunks.append({"choices": [{"delta": {"content": ""}, "finish_reason": "tool_calls"}]})
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.feed(StreamChunk.model_validate(chunk))
    reply = assembler.finish()
    assert reply.message.tool_calls[0].function.arguments == args
    assert reply.message.reasoning_content == reasoning
