"""DeepSeek's wire shapes for a reply: SSE chunks (as in ``deepseek-wire/v4flash_thinking_toolcall.sse``) or one
JSON body (as in ``v4flash_toolcall_nonstream.json``)."""

from __future__ import annotations

import json
import re
from typing import Any

from scenarios.emulator.faults import Generated

SYSTEM_FINGERPRINT = "emulator-v4"
KEEP_ALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"

_TEXT_PIECES = re.compile(r"\s*\S+|\s+")
_ARG_PIECES = re.compile(r'[{}\[\]"]|[:,]\s*|\s*[^{}\[\]":,\s]+|\s+')


def text_pieces(text: str) -> list[str]:
    """Word-sized fragments (``" user"``), like the model's token stream."""
    return _TEXT_PIECES.findall(text)


def shaped_pieces(text: str, explicit: tuple[str, ...] | None, delta_chars: int | None) -> list[str]:
    """The deltas of one text: the scripted pieces when they still join to it, else fixed-size slices, else words."""
    if explicit is not None and "".join(explicit) == text:
        return [p for p in explicit if p]
    if delta_chars is not None:
        return [text[i : i + delta_chars] for i in range(0, len(text), delta_chars)]
    return text_pieces(text)


def argument_pieces(arguments: str) -> list[str]:
    """Small fragments of a raw argument string (``{``, ``"``, ``location``, ``": "``...); joined they give it back."""
    pieces = _ARG_PIECES.findall(arguments)
    assert "".join(pieces) == arguments
    return pieces


def usage(*, prompt: int, hit: int, completion: int, reasoning: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": hit},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
        "prompt_cache_hit_tokens": hit,
        "prompt_cache_miss_tokens": prompt - hit,
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse_events(
    reply: Generated, *, completion_id: str, created: int, model: str, thinking: bool, usage: dict[str, Any]
) -> list[bytes]:
    """Every ``data:`` event of a streamed reply, ``data: [DONE]`` last."""

    def chunk(delta: dict[str, Any], finish: str | None = None, last_usage: dict[str, Any] | None = None) -> bytes:
        body = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": last_usage,
        }
        return b"data: " + _dumps(body).encode("utf-8") + b"\n\n"

    shape = reply.shape
    size = shape.delta_chars if shape is not None else None
    reasoning = shaped_pieces(reply.reasoning, shape.reasoning_pieces if shape else None, size)
    content = shaped_pieces(reply.content, shape.content_pieces if shape else None, size)
    out: list[bytes] = []
    if thinking:
        out.append(chunk({"role": "assistant", "content": None, "reasoning_content": ""}))
        out.extend(chunk({"content": None, "reasoning_content": p}) for p in reasoning)
        out.extend(chunk({"content": p, "reasoning_content": None}) for p in content)
    else:
        out.append(chunk({"role": "assistant", "content": ""}))
        out.extend(chunk({"content": p}) for p in content)
    for index, call in enumerate(reply.calls):
        first = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(chunk({"tool_calls": [first]}))
        out.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in argument_pieces(call.arguments)
        )
    final = {"content": "", "reasoning_content": None} if thinking else {"content": ""}
    out.append(chunk(final, reply.finish_reason, usage))
    out.append(DONE)
    return out


def completion_body(
    reply: Generated, *, completion_id: str, created: int, model: str, thinking: bool, usage: dict[str, Any]
) -> bytes:
    """The JSON body of a reply when ``stream`` is false."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if thinking:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = [
            {
                "index": i,
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(reply.calls)
        ]
    body = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
        "usage": usage,
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    return _dumps(body).encode("utf-8")
