"""The rules DeepSeek applies to a conversation as a whole and to its size (DESIGN §6 "How strict the emulator is").

Each rule answers 400 with DeepSeek's own message (its sources are listed in DESIGN §6):

- every tool call of an assistant message is answered by a tool message before the next assistant, user or system
  message (and before the end of the request);
- every tool message answers a call of the assistant message before it that no other tool message answered;
- ``max_tokens`` is within 1 and the model's output limit;
- the prompt plus the completion it asks room for fits the context window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scenarios.emulator.errors import ClientRequestError

UNANSWERED_CALL = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "(insufficient tool messages following tool_calls message)"
)
UNASKED_TOOL = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"

DEFAULT_CONTEXT_WINDOW = 1_000_000
DEFAULT_MAX_OUTPUT_TOKENS = 393_216


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """The emulated model's limits: its context window and its largest output, in tokens."""

    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS


def _bad(message: str) -> ClientRequestError:
    return ClientRequestError(400, message)


def check_tool_pairing(messages: Sequence[Mapping[str, Any]]) -> None:
    """400 for a tool call no tool message answers in time, or a tool message that answers no open call."""
    open_calls: set[str] = set()
    for m in messages:
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in open_calls:
                raise _bad(UNASKED_TOOL)
            open_calls.discard(call_id)
            continue
        if open_calls:
            raise _bad(UNANSWERED_CALL)
        if role == "assistant":
            open_calls = {c["id"] for c in m.get("tool_calls") or ()}
    if open_calls:
        raise _bad(UNANSWERED_CALL)


def max_tokens_error(limits: ModelLimits, value: int) -> ClientRequestError:
    return ClientRequestError(
        400,
        f"Invalid max_tokens value, the valid range of max_tokens is [1, {limits.max_output_tokens}]",
        param="max_tokens",
    )


def check_max_tokens(limits: ModelLimits, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= limits.max_output_tokens:
        raise max_tokens_error(limits, value)


def check_context(limits: ModelLimits, prompt_tokens: int, max_tokens: int | None) -> None:
    """400 when the prompt and the completion asked for (``max_tokens``; none when not given) pass the window."""
    completion = max_tokens or 0
    requested = prompt_tokens + completion
    if requested > limits.context_window:
        raise _bad(
            f"This model's maximum context length is {limits.context_window} tokens. However, you requested "
            f"{requested} tokens ({prompt_tokens} in the messages, {completion} in the completion). Please reduce "
            "the length of the messages or completion."
        )
