"""Parse a tool call's raw argument string, closing it with ``json-repair`` when it was cut off or malformed.

DeepSeek cuts a reply at ``max_tokens`` with ``finish_reason: "length"``; the last tool call's ``arguments`` then end
mid-string. ``json_repair.repair_json(..., return_objects=True)`` closes open strings, arrays and objects. The raw
string in the assistant message is never touched: only the parsed dict that gets executed is repaired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import json_repair

from sessions.repair.errors import ModelArgumentsError

_CUT_OFF_HINT = (
    " Your reply was cut off at the output limit (finish_reason=length): send the call again with shorter "
    "arguments (for a large file, write it in several smaller parts)."
)


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    args: dict[str, Any]
    repaired: bool
    """True when ``json.loads`` failed and json-repair produced the dict (the last value may be incomplete)."""


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
        first_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except ValueError as exc:
        first_error = str(exc)
    else:
        if isinstance(value, dict):
            return ParsedArguments(value, repaired=False)
        raise ModelArgumentsError(
            f"The arguments must be one JSON object, got a JSON {_json_kind(value)}. "
            'Send them as {"parameter": value, ...}.' + hint
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
