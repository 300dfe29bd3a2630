"""Scripted stream shapes (issue 18): a reply fixes its chunk boundaries — explicit pieces, a fixed delta size, or
socket writes of a few bytes that split a UTF-8 character — and ends with any finish_reason. The client's decoder is
held to assembling the same reply whatever the byte boundaries are."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from scenarios.emulator import Script, open_emulator
from sessions.wire.client import DeepSeekClient
from sessions.wire.messages import ChatRequest, SystemMessage, UserMessage, encode_request
from sessions.wire.sse import SseData, SseParser
from sessions.wire.stream import Completed, StreamAssembler, assemble_sse, decode_chunk
from tests.support.client import FAST, collect, raw_sse

SYSTEM = SystemMessage(content="You are the EXECUTOR. Keep edits small.")
TEXT = "naïve café — 日本語 ✓ 🙂 done"


def script(**reply: Any) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": [reply]}]})


def req() -> ChatRequest:
    return ChatRequest(model="deepseek-v4-flash", messages=(SYSTEM, UserMessage(content="go")), stream=True)


def deltas(body: bytes, kind: str) -> list[str]:
    events, _ = assemble_sse(body)
    return [getattr(e, "text", "") for e in events if e.kind == kind]


async def test_explicit_pieces_are_the_deltas_so_a_marker_can_be_split() -> None:
    pieces = ["<<<NEE", "DS_PRO: hard>", ">>"]
    sc = script(reasoning="hm", stream={"content_pieces": pieces, "reasoning_pieces": ["h", "m"]})
    assert sc.sessions[0].replies[0].content == "<<<NEEDS_PRO: hard>>>"
    async with open_emulator(script=sc) as emu:
        body = await raw_sse(emu.base_url, req())
    assert deltas(body, "content_delta") == pieces
    assert deltas(body, "reasoning_delta") == ["h", "m"]


async def test_a_fixed_delta_size_cuts_every_text() -> None:
    async with open_emulator(script=script(content="abcdefg", stream={"delta_chars": 3})) as emu:
        body = await raw_sse(emu.base_url, req())
    assert deltas(body, "content_delta") == ["abc", "def", "g"]


def test_pieces_that_do_not_join_to_the_text_are_refused() -> None:
    with pytest.raises(ValidationError, match="content_pieces joined must equal content"):
        script(content="abc", stream={"content_pieces": ["ab"]})


@pytest.mark.parametrize("finish", ["length", "content_filter"])
async def test_any_finish_reason_reaches_the_client_even_with_reasoning_only(finish: str) -> None:
    sc = script(reasoning="thinking until the limit", finish_reason=finish)
    async with open_emulator(script=sc) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as c:
        events = await collect(c, req())
    last = events[-1]
    assert isinstance(last, Completed)
    assert last.reply.finish_reason == finish
    assert last.reply.message.content in ("", None)
    assert last.reply.message.reasoning_content == "thinking until the limit"


async def test_insufficient_system_resource_is_retried_and_the_next_reply_kept(autojump_clock: trio.abc.Clock) -> None:
    sc = Script.model_validate(
        {
            "sessions": [
                {
                    "key": "executor",
                    "replies": [
                        {"reasoning": "cut for capacity", "finish_reason": "insufficient_system_resource"},
                        {"content": "whole"},
                    ],
                }
            ]
        }
    )
    async with open_emulator(script=sc) as emu, DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as c:
        events = await collect(c, req())
    last = events[-1]
    assert isinstance(last, Completed) and last.reply.message.content == "whole"


async def _raw_chunk_sizes(port: int, body: bytes) -> tuple[list[int], bytes]:
    """The HTTP chunk sizes of a streamed answer, read off the wire (chunked framing is exact, unlike TCP reads)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    head = (
        f"POST /chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    await stream.send_all(head + body)
    raw = bytearray()
    while data := await stream.receive_some(65536):
        raw += data
    await stream.aclose()
    rest = bytes(raw).split(b"\r\n\r\n", 1)[1]
    sizes, payload = [], bytearray()
    while True:
        line, rest = rest.split(b"\r\n", 1)
        size = int(line, 16)
        if size == 0:
            return sizes, bytes(payload)
        sizes.append(size)
        payload += rest[:size]
        rest = rest[size + 2 :]


async def test_write_bytes_splits_utf8_characters_on_the_wire_and_the_client_reassembles_them() -> None:
    sc = script(content=TEXT, stream={"write_bytes": 1})
    async with open_emulator(script=sc) as emu:
        sizes, payload = await _raw_chunk_sizes(emu.port, encode_request(req()))
        assert set(sizes) == {1}  # every byte its own write: each multi-byte character straddles writes
        assert deltas(payload, "content_delta") != []
        emu.reset()
        async with DeepSeekClient(base_url=emu.base_url, api_key="k", settings=FAST) as client:
            events = await collect(client, req())
    last = events[-1]
    assert isinstance(last, Completed) and last.reply.message.content == TEXT


def _sse(text: str) -> bytes:
    words = text.split(" ")
    out = b""
    for i, w in enumerate(words):
        piece = w if i == 0 else " " + w
        chunk = {"id": "x", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        out += b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"
    use = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    end = {"id": "x", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}], "usage": use}
    return out + b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n"


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=40), cuts=st.lists(st.integers(min_value=0), max_size=30))
def test_the_decoder_assembles_the_same_text_whatever_the_byte_boundaries(text: str, cuts: list[int]) -> None:
    """SSE lines are UTF-8: the parser splits lines on bytes and decodes whole lines, so a character cut between two
    network reads is never decoded half (no U+FFFD, no error)."""
    body = _sse(text)
    points = sorted({c % len(body) for c in cuts})
    parts = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    parser, assembler = SseParser(), StreamAssembler()
    for part in parts:
        for item in parser.feed(part):
            if isinstance(item, SseData):
                assembler.feed(decode_chunk(item.payload))
    assert assembler.complete
    assert assembler.finish().message.content == text
