"""Canonical rendering of a chat request into token segments, with tokenization memoized per segment.

The emulator does not know DeepSeek's exact chat template, so it renders a plausible one with DeepSeek's own special
tokens: a head (BOS, thinking mode and reasoning effort: they render at token 0, DESIGN §3.7), the leading system
messages, the tool schemas as sent, then every other message in order. Each piece is one *segment*; a segment is
tokenized once and remembered by its text, so accounting a request costs O(new content).

Assistant messages render exactly as sent: ``reasoning_content``, content and every tool call's raw ``arguments``
string. A client that re-serializes arguments therefore changes the tokens, as it would on the real server.
``None`` and ``""`` render alike (a template prints nothing for both).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sessions.accounting import tokens

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
USER = "<｜User｜>"
ASSISTANT = "<｜Assistant｜>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
TOOL_SEP = "<｜tool▁sep｜>"
OUTPUT_BEGIN = "<｜tool▁output▁begin｜>"
OUTPUT_END = "<｜tool▁output▁end｜>"


@dataclass(frozen=True, slots=True)
class Segment:
    """One rendered piece of a request and its tokens (``array('I')`` bytes, so prefixes compare with memcmp)."""

    digest: bytes
    tokens: bytes
    count: int


def _text(content: Any) -> str:
    """Message content as text: a string, ``None``, or a list of ``{"type":"text","text":...}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(content)


def _arguments(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, separators=(",", ":"))


def render_tool_call(name: str, arguments: str) -> str:
    """One tool call in the template's markup (also what a leaked call looks like in content or reasoning)."""
    return f"{CALL_BEGIN}function{TOOL_SEP}{name}\n```json\n{arguments}\n```{CALL_END}"


def render_tool_calls(calls: Sequence[tuple[str, str]]) -> str:
    return CALLS_BEGIN + "".join(render_tool_call(n, a) for n, a in calls) + CALLS_END


def render_head(*, thinking: bool, reasoning_effort: str | None) -> str:
    mode = "thinking" if thinking else "chat"
    return f"{BOS}[mode:{mode}|effort:{reasoning_effort or 'default'}]"


def render_tools(tools: Sequence[Any]) -> str:
    """The tool schemas as sent: their order and key order are the client's, so reordering them is a miss."""
    return "\n\n## Tools\n" + "\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tools)


def render_assistant(reasoning: str | None, content: str | None, calls: Sequence[tuple[str, str]]) -> str:
    out = ASSISTANT + THINK_OPEN + (reasoning or "") + THINK_CLOSE + (content or "")
    if calls:
        out += render_tool_calls(calls)
    return out + EOS


def render_message(message: Mapping[str, Any]) -> str:
    """One wire message (already validated) in the template."""
    role = message.get("role")
    if role == "system":
        return "\n\n" + _text(message.get("content"))
    if role == "user":
        return USER + _text(message.get("content"))
    if role == "tool":
        return OUTPUT_BEGIN + _text(message.get("content")) + OUTPUT_END
    calls = [
        (str(c.get("function", {}).get("name", "")), _arguments(c.get("function", {}).get("arguments", "")))
        for c in message.get("tool_calls") or ()
        if isinstance(c, Mapping)
    ]
    return render_assistant(message.get("reasoning_content"), _text(message.get("content")), calls)


def render_request(body: Mapping[str, Any], *, thinking: bool) -> list[str]:
    """The segment texts of a request: head, leading system messages, tools, then the other messages in order."""
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or ()
    out = [render_head(thinking=thinking, reasoning_effort=body.get("reasoning_effort"))]
    i = 0
    while i < len(messages) and messages[i].get("role") == "system":
        out.append(render_message(messages[i]))
        i += 1
    tools = body.get("tools")
    if tools:
        out.append(render_tools(tools))
    out.extend(render_message(m) for m in messages[i:])
    return out


class SegmentCache:
    """Segment text → tokens, remembered so that old messages cost a dict lookup. When full, the oldest half goes."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self._max = max_entries
        self._entries: dict[str, Segment] = {}
        self.encoded = 0
        """How many segments were actually tokenized (the rest came from memory)."""

    def segment(self, text: str) -> Segment:
        seg = self._entries.get(text)
        if seg is not None:
            return seg
        ids = tokens.encode(text) if text else []
        seg = Segment(
            digest=hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest(),
            tokens=array("I", ids).tobytes(),
            count=len(ids),
        )
        self.encoded += 1
        if len(self._entries) >= self._max:
            for old in list(itertools.islice(self._entries, self._max // 2)):
                del self._entries[old]
        self._entries[text] = seg
        return seg

    def segments(self, texts: Sequence[str]) -> list[Segment]:
        return [self.segment(t) for t in texts]

    def __len__(self) -> int:
        return len(self._entries)
