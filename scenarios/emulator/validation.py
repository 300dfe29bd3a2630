"""Request validation the way DeepSeek answers it (DESIGN §4, §6): 401 without a bearer key, 400 for a malformed body,
a broken conversation or ``max_tokens`` out of range, 422 for another parameter out of range.

The rules DeepSeek applies to a conversation as a whole and to its size (DESIGN §6 "How strict the emulator is"),
each a 400 with DeepSeek's own message: every tool call of an assistant message is answered by a tool message before
the next assistant, user or system message (and before the end of the request); every tool message answers a call of
the assistant message before it that no other tool message answered; ``max_tokens`` is within 1 and the model's
output limit; the prompt plus the completion it asks room for fits the context window."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scenarios.emulator.errors import ClientRequestError

REASONING_ROUND_TRIP = "The reasoning_content in the thinking mode must be passed back to the API."
ROLES = ("system", "user", "assistant", "tool")
EFFORTS = ("low", "medium", "high", "max")
NON_THINKING_MODELS = ("deepseek-chat",)


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


def check_tool_pairing(messages: Sequence[Mapping[str, Any]]) -> None:
    """400 for a tool call no tool message answers in time, or a tool message that answers no open call."""
    open_calls: set[str] = set()
    for m in messages:
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in open_calls:
                raise _bad(UNASKED_TOOL, "messages")
            open_calls.discard(call_id)
            continue
        if open_calls:
            raise _bad(UNANSWERED_CALL, "messages")
        if role == "assistant":
            open_calls = {c["id"] for c in m.get("tool_calls") or ()}
    if open_calls:
        raise _bad(UNANSWERED_CALL, "messages")


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


MAX_OUTPUT_TOKENS = DEFAULT_MAX_OUTPUT_TOKENS


@dataclass(frozen=True, slots=True)
class ValidRequest:
    body: Mapping[str, Any]
    model: str
    stream: bool
    thinking: bool
    system_text: str | None
    """The first message's content when it is a system message (identifies the session)."""
    last_user_text: str | None = None
    """The content of the last user message (tells apart sessions that share a system message: forks)."""


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(p["text"] for p in content or ())


def check_auth(headers: Mapping[str, str], rejected: Collection[str] = ()) -> None:
    """401 without a bearer key, or for a key in ``rejected`` (a script that plays a bad key), as DeepSeek answers
    a key it does not know."""
    value = headers.get("authorization", "")
    scheme, _, key = value.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ClientRequestError(
            401,
            "Authentication Fails: send your API key as 'Authorization: Bearer <key>' (any non-empty key works "
            "with the emulator)",
            type="authentication_error",
        )
    if key.strip() in rejected:
        raise ClientRequestError(
            401,
            f"Authentication Fails, Your api key: ****{key.strip()[-4:]} is invalid",
            type="authentication_error",
            code="invalid_request_error",
        )


def _bad(message: str, param: str | None = None) -> ClientRequestError:
    return ClientRequestError(400, message, param=param)


def _range(message: str, param: str) -> ClientRequestError:
    return ClientRequestError(422, message, param=param)


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(f"Failed to deserialize the JSON body into the target type: {exc}") from None


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _content_ok(content: Any, *, nullable: bool) -> bool:
    if content is None:
        return nullable
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in content)


def _check_message(i: int, m: Any) -> None:
    where = f"messages[{i}]"
    if not isinstance(m, Mapping):
        raise _bad(f"{where}: expected an object", "messages")
    role = m.get("role")
    if role not in ROLES:
        expected = "expected one of `system`, `user`, `assistant`, `tool`"
        raise _bad(f"{where}: unknown variant `{role}`, {expected}", "messages")
    if not _content_ok(m.get("content"), nullable=role == "assistant"):
        raise _bad(f"{where}: content must be a string or a list of text parts", "messages")
    if role == "tool" and not isinstance(m.get("tool_call_id"), str):
        raise _bad(f"{where}: a tool message needs its tool_call_id", "messages")
    if role != "assistant":
        return
    if m.get("reasoning_content") is not None and not isinstance(m.get("reasoning_content"), str):
        raise _bad(f"{where}: reasoning_content must be a string", "messages")
    calls = m.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise _bad(f"{where}: tool_calls must be an array", "messages")
    for j, c in enumerate(calls):
        fn = c.get("function") if isinstance(c, Mapping) else None
        if (
            not isinstance(c, Mapping)
            or not isinstance(c.get("id"), str)
            or not isinstance(fn, Mapping)
            or not isinstance(fn.get("name"), str)
            or not isinstance(fn.get("arguments"), str)
        ):
            raise _bad(
                f"{where}.tool_calls[{j}]: expected {{id, type: function, function: {{name, arguments}}}} "
                "with arguments as a string",
                "messages",
            )


def _check_ranges(body: Mapping[str, Any]) -> None:
    bounds = {
        "temperature": (0.0, 2.0),
        "top_p": (0.0, 1.0),
        "presence_penalty": (-2.0, 2.0),
        "frequency_penalty": (-2.0, 2.0),
    }
    for name, (lo, hi) in bounds.items():
        v = body.get(name)
        if v is not None and (not _is_number(v) or not lo <= v <= hi):
            raise _range(f"Invalid {name} value: {v!r}, it must be a number between {lo} and {hi}", name)
    tl = body.get("top_logprobs")
    if tl is not None and (not isinstance(tl, int) or isinstance(tl, bool) or not 0 <= tl <= 20):
        raise _range(f"Invalid top_logprobs value: {tl!r}, it must be an integer between 0 and 20", "top_logprobs")
    n = body.get("n")
    if n is not None and n != 1:
        raise _range(f"Invalid n value: {n!r}, only 1 is supported", "n")


def validate(body: Any, *, models: tuple[str, ...] | None, limits: ModelLimits | None = None) -> ValidRequest:
    if not isinstance(body, Mapping):
        raise _bad("Failed to deserialize the JSON body into the target type: expected an object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model: missing field `model`", "model")
    if models is not None and model not in models:
        raise _bad(f"Model Not Exist: {model!r}; the emulator serves {', '.join(models)}", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages must be a non-empty array", "messages")
    for i, m in enumerate(messages):
        _check_message(i, m)
    check_tool_pairing(messages)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _bad("tools must be an array", "tools")
        for j, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, Mapping) else None
            if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                raise _bad(f"tools[{j}]: expected {{type: function, function: {{name, ...}}}}", "tools")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("stream must be a boolean", "stream")
    thinking_field = body.get("thinking")
    if thinking_field is not None:
        if not isinstance(thinking_field, Mapping) or thinking_field.get("type") not in ("enabled", "disabled"):
            raise _bad('thinking: expected {"type": "enabled" | "disabled"}', "thinking")
        thinking = thinking_field.get("type") == "enabled"
    else:
        thinking = model not in NON_THINKING_MODELS
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in EFFORTS:
        raise _bad(
            f"reasoning_effort: unknown variant `{effort}`, expected one of {', '.join(EFFORTS)}", "reasoning_effort"
        )
    check_max_tokens(limits or ModelLimits(), body.get("max_tokens"))
    _check_ranges(body)
    choice = body.get("tool_choice")
    if choice is not None:
        if not (choice in ("none", "auto", "required") or isinstance(choice, Mapping)):
            raise _bad(f"tool_choice: unknown value {choice!r}", "tool_choice")
        if thinking and (choice == "required" or isinstance(choice, Mapping)):
            raise _bad(
                "tool_choice 'required' or a named function is not supported in thinking mode: "
                "use 'auto' or 'none', or disable thinking",
                "tool_choice",
            )
    if tools and thinking:
        for m in messages:
            if m.get("role") == "assistant" and m.get("reasoning_content") is None:
                raise _bad(REASONING_ROUND_TRIP, "messages")
    first = messages[0]
    system_text = _text(first.get("content")) if first.get("role") == "system" else None
    users = [m for m in messages if m.get("role") == "user"]
    last_user = _text(users[-1].get("content")) if users else None
    return ValidRequest(
        body=body, model=model, stream=stream, thinking=thinking, system_text=system_text, last_user_text=last_user
    )
