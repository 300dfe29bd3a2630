"""Parse a tool call's raw argument string, closing it with ``json-repair`` when it was cut off or malformed.

DeepSeek cuts a reply at ``max_tokens`` with ``finish_reason: "length"``; the last tool call's ``arguments`` then end
mid-string. Two well-kept parsers do the closing, never hand-written brace counting:

* a pure truncation (a prefix of valid JSON: the strict parse fails only with "EOF while parsing") is parsed by
  pydantic-core's partial JSON mode (``allow_partial="trailing-strings"``): Rust, linear, about 2 ms for 1 MB. An
  unfinished trailing string is kept; an unfinished key, number or literal is dropped (so a cut-off parameter goes
  missing and fails validation instead of running with an invented value);
* the same object written twice or more in a row (a stalled stream repeated it) is that object once
  (:func:`~sessions.repair.stall.repeated_object`); different objects one after another are an error that shows them;
* anything else malformed (trailing commas, single quotes, extra text) goes to ``json_repair.repair_json(...,
  return_objects=True)``, up to :data:`MAX_REPAIR_CHARS`: its pure-Python heuristics grow faster than linearly (about
  0.3 s for 100 kB of source code, 16 s for 1 MB), so a larger malformed string is an error for the model instead.

The raw string in the assistant message is never touched: only the parsed dict that gets executed is repaired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import json_repair
import pydantic_core

from sessions.repair.errors import ModelArgumentsError
from sessions.repair.stall import repeated_object

MAX_REPAIR_CHARS = 64_000

_CUT_OFF_HINT = (
    " Your reply was cut off at the output limit (finish_reason=length): send the call again with shorter "
    "arguments (for a large file, write it in several smaller parts)."
)


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    args: dict[str, Any]
    repaired: bool
    """True when ``json.loads`` failed and json-repair produced the dict (the last value may be incomplete)."""
    copies: int = 1
    """How many times the model wrote this same object in a row (more than 1: a stall, run once)."""


def parse_arguments(raw: str, *, truncated: bool = False) -> ParsedArguments:
    """The JSON object in ``raw``; repaired when it does not parse as is.

    An empty (or blank) string is ``{}``: the model's way of calling a tool without parameters.
    ``truncated`` (the reply ended with ``finish_reason == "length"``) only shapes the error message.
    Raises :class:`ModelArgumentsError`, with a message for the model, when no JSON object can be recovered.
    Never raises anything else, whatever the input.
    """
    hint = _CUT_OFF_HINT if truncated else ""
    if not raw.strip():
        return ParsedArguments({}, repaired=False)
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ModelArgumentsError(
            "The arguments nest too deeply to parse; send a flatter JSON object." + hint
        ) from None
    except json.JSONDecodeError as exc:
        first_error = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
        if exc.msg == "Extra data" and raw[exc.pos :].lstrip().startswith("{"):
            try:
                repeated = repeated_object(raw)
            except ModelArgumentsError as several:
                raise ModelArgumentsError(str(several) + hint) from None
            if repeated is not None:
                return ParsedArguments(repeated[0], repaired=False, copies=repeated[1])
            raise ModelArgumentsError(
                "The arguments hold several JSON objects one after another; a call takes exactly one. "
                "Send one tool call per object." + hint
            ) from None
    except ValueError as exc:
        first_error = str(exc)
    else:
        if isinstance(value, dict):
            return ParsedArguments(value, repaired=False)
        raise ModelArgumentsError(
            f"The arguments must be one JSON object, got a JSON {_json_kind(value)}. "
            'Send them as {"parameter": value, ...}.' + hint
        )
    partial = _parse_truncated(raw)
    if partial is not None:
        return ParsedArguments(partial, repaired=True)
    if len(raw) > MAX_REPAIR_CHARS:
        raise ModelArgumentsError(
            f"The arguments are not valid JSON ({first_error}) and, at {len(raw)} characters, too large to repair. "
            "Send the call again with valid JSON arguments." + hint
        )
    try:
        repaired = json_repair.repair_json(raw, return_objects=True)
    except (RecursionError, ValueError, TypeError, IndexError):
        repaired = None
    if isinstance(repaired, dict):
        return ParsedArguments(repaired, repaired=True)
    raise ModelArgumentsError(
        f"The arguments are not valid JSON ({first_error}) and could not be repaired into a JSON object. "
        'Send the call again with the arguments as one complete JSON object: {"parameter": value, ...}.' + hint
    )


def _parse_truncated(raw: str) -> dict[str, Any] | None:
    """The object in ``raw`` when ``raw`` is a cut-off prefix of valid JSON, else None."""
    try:
        pydantic_core.from_json(raw)
    except TypeError:
        return None  # a lone surrogate: not encodable as UTF-8, so not for the Rust parser
    except ValueError as exc:
        if not str(exc).startswith("EOF while parsing"):
            return None
    else:
        return None  # complete JSON that json.loads refused (a lone surrogate, say): not a truncation
    try:
        value = pydantic_core.from_json(raw, allow_partial="trailing-strings")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
