"""Find tool calls that the model wrote as text: into ``reasoning_content``, or leaked as markup into ``content``.

DeepSeek sometimes answers with ``tool_calls`` empty and the call written out in one of the shapes its chat templates
(or other models' templates) use. The shapes understood here:

* ``special_tokens``: V3 / V3.1 template tokens, e.g.
  ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>`` or
  ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`` (ASCII ``|`` and ``_`` accepted too);
* ``dsml``: V3.2 markup, ``<｜DSML｜invoke name="NAME">`` with ``<｜DSML｜parameter name="k" string="true">v</…>``
  tags or a JSON body, with or without the ``｜DSML｜`` marker;
* ``tool_call_tag``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
* ``function_tag``: ``<function=NAME>{...}</function>`` or with ``<parameter=k>v</parameter>`` tags;
* ``fenced_json``: a fenced JSON object with ``"name"`` and ``"arguments"`` / ``"parameters"`` (or the OpenAI
  ``{"function": {"name", "arguments"}}`` form), or a whole text that is exactly such an object.

Only names of known tools count: anything else is prose. Each call gets a deterministic id derived from its content
(``scv_`` + a short sha256), never a random one. Nothing here raises on any input.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sessions.repair.errors import ModelArgumentsError
from sessions.repair.truncation import parse_arguments

Shape = Literal["special_tokens", "dsml", "tool_call_tag", "function_tag", "fenced_json"]
Source = Literal["content", "reasoning"]


@dataclass(frozen=True, slots=True)
class ScavengedCall:
    id: str
    name: str
    args: dict[str, Any]
    repaired: bool
    """json-repair had to close the arguments (for example markup cut off at the output limit)."""
    source: Source
    shape: Shape


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    name: str
    args: dict[str, Any]
    repaired: bool
    shape: Shape
    open_ended: bool = False


_BAR = "[|｜]"
_SP = "[▁_ ]"
_CALL_BEGIN = re.compile(f"<{_BAR}tool{_SP}call{_SP}begin{_BAR}>")
_CALL_END = re.compile(f"<{_BAR}tool{_SP}call{_SP}end{_BAR}>")
_CALL_SEP = re.compile(f"<{_BAR}tool{_SP}sep{_BAR}>")
_DSML = f"(?:{_BAR}DSML{_BAR})?"
_INVOKE_BEGIN = re.compile(f'<{_DSML}invoke\\s+name\\s*=\\s*"([^"<>]+)"\\s*>')
_INVOKE_END = re.compile(f"</{_DSML}invoke>")
_DSML_PARAM = re.compile(
    f'<{_DSML}parameter\\s+name\\s*=\\s*"([^"<>]+)"(?:\\s+string\\s*=\\s*"(true|false)")?\\s*>(.*?)</{_DSML}parameter>',
    re.DOTALL,
)
_TOOL_CALL_BEGIN = re.compile(r"<tool_call>")
_TOOL_CALL_END = re.compile(r"</tool_call>")
_FUNCTION_BEGIN = re.compile(r"<function=([^<>\s]+)>")
_FUNCTION_END = re.compile(r"</function>")
_FUNCTION_PARAM = re.compile(r"<parameter=([^<>\s]+)>(.*?)</parameter>", re.DOTALL)
_FENCE = re.compile(r"`{3,}[A-Za-z0-9_+-]*[ \t]*\r?\n?\s*")  # a stray backtick before the fence is common
_FENCE_CLOSE = re.compile(r"\s*```")
_FENCED_BODY = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*(.*?)\s*```\s*$", re.DOTALL)
_DECODER = json.JSONDecoder()


def scavenge_calls(
    *, content: str | None, reasoning: str | None, known_tools: Collection[str]
) -> tuple[ScavengedCall, ...]:
    """Calls of known tools written into ``content``, or failing that into ``reasoning``; in text order.

    Content wins because it is what the model meant to say; reasoning is searched only when content has no call.
    The same call written twice (same name and arguments) counts once.
    """
    for source, text in (("content", content), ("reasoning", reasoning)):
        if not text:
            continue
        found = find_calls(text, known_tools)
        if found:
            src: Source = "content" if source == "content" else "reasoning"
            return tuple(
                ScavengedCall(_call_id(i, f.name, f.args), f.name, f.args, f.repaired, src, f.shape)
                for i, f in enumerate(found)
            )
    return ()


def find_calls(text: str, known_tools: Collection[str]) -> list[_Found]:
    """Every call of a known tool in ``text``, in order; overlapping matches keep the outermost, duplicates drop."""
    candidates: list[_Found] = []
    for finder in (_special_tokens, _dsml, _tool_call_tags, _function_tags, _fenced_json):
        candidates.extend(f for f in finder(text) if f.name in known_tools)
    closed_starts = [f.start for f in candidates if not f.open_ended]
    candidates = [
        f for f in candidates if not f.open_ended or not any(f.start < start for start in closed_starts)
    ]  # markup cut off at the end of the text never swallows a complete call written after it
    candidates.sort(key=lambda f: (f.start, -f.end))
    out: list[_Found] = []
    seen: set[str] = set()
    last_end = -1
    for found in candidates:
        if found.start < last_end:
            continue
        last_end = found.end
        key = found.name + "\x00" + _canonical(found.args)
        if key not in seen:
            seen.add(key)
            out.append(found)
    return out


# ------------------------------------------------------------------------------------------------------- shapes


def _special_tokens(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _CALL_BEGIN, _CALL_END, open_ended=True):
        parts = _CALL_SEP.split(text[begin.end() : stop])
        if parts and parts[0].strip() == "function":
            parts = parts[1:]
        if len(parts) == 1:
            name, _, body = parts[0].partition("\n")
        elif len(parts) == 2:
            name, body = parts
        else:
            continue
        parsed = _parse_object(_unfence(body))
        if parsed is not None:
            yield _Found(begin.start(), end, name.strip(), *parsed, "special_tokens", open_ended=stop == len(text))


def _dsml(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _INVOKE_BEGIN, _INVOKE_END):
        body = text[begin.end() : stop]
        params = list(_DSML_PARAM.finditer(body))
        if params:
            args: dict[str, Any] = {}
            for p in params:
                key, is_string, value = p.group(1), p.group(2), p.group(3)
                args[key] = value if is_string == "true" else _json_or_text(value)
            yield _Found(begin.start(), end, begin.group(1).strip(), args, False, "dsml")
        elif not body.strip():
            yield _Found(begin.start(), end, begin.group(1).strip(), {}, False, "dsml")
        else:
            parsed = _parse_object(_unfence(body))
            if parsed is not None:
                yield _Found(begin.start(), end, begin.group(1).strip(), *parsed, "dsml")


def _tool_call_tags(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _TOOL_CALL_BEGIN, _TOOL_CALL_END):
        parsed = _parse_object(_unfence(text[begin.end() : stop]))
        if parsed is None:
            continue
        call = _call_shaped(parsed[0])
        if call is not None:
            yield _Found(begin.start(), end, call[0], call[1], parsed[1] or call[2], "tool_call_tag")


def _function_tags(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _FUNCTION_BEGIN, _FUNCTION_END):
        body = text[begin.end() : stop]
        params = list(_FUNCTION_PARAM.finditer(body))
        if params:
            args = {p.group(1): _strip_one_newline(p.group(2)) for p in params}
            yield _Found(begin.start(), end, begin.group(1), args, False, "function_tag")
        elif not body.strip():
            yield _Found(begin.start(), end, begin.group(1), {}, False, "function_tag")
        else:
            parsed = _parse_object(_unfence(body))
            if parsed is not None:
                yield _Found(begin.start(), end, begin.group(1), *parsed, "function_tag")


def _fenced_json(text: str) -> Iterator[_Found]:
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        whole = _strict_object(stripped)
        call = _call_shaped(whole) if whole is not None else None
        if call is not None:
            yield _Found(0, len(text), call[0], call[1], call[2], "fenced_json")
            return
    for fence in _FENCE.finditer(text):
        at = fence.end()
        if not text.startswith("{", at):
            continue
        try:
            value, obj_end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            continue
        close = _FENCE_CLOSE.match(text, obj_end)
        if close is None or not isinstance(value, dict):
            continue
        call = _call_shaped(value)
        if call is not None:
            yield _Found(fence.start(), close.end(), call[0], call[1], call[2], "fenced_json")


# ------------------------------------------------------------------------------------------------------ helpers


def _blocks(
    text: str, begin_re: re.Pattern[str], end_re: re.Pattern[str], *, open_ended: bool = False
) -> Iterator[tuple[re.Match[str], int, int]]:
    """(opening match, body end, block end) for each opening tag whose closing tag comes before the next opening.

    Bodies never overlap, so the work stays linear in the text however many unclosed tags a looping model writes.
    ``open_ended``: the last opening may run to the end of the text (markup cut off at the output limit).
    """
    begins = list(begin_re.finditer(text))
    for i, begin in enumerate(begins):
        limit = begins[i + 1].start() if i + 1 < len(begins) else len(text)
        end = end_re.search(text, begin.end(), limit)
        if end is not None:
            yield begin, end.start(), end.end()
        elif open_ended and i + 1 == len(begins):
            yield begin, len(text), len(text)


def _call_shaped(obj: dict[str, Any]) -> tuple[str, dict[str, Any], bool] | None:
    """(name, arguments, repaired) of ``{"name", "arguments"|"parameters"}`` or ``{"function": {...}}``."""
    fn = obj.get("function")
    if isinstance(fn, dict) and "name" not in obj:
        obj = fn
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    raw = obj.get("arguments", obj.get("parameters"))
    if raw is None and "arguments" not in obj and "parameters" not in obj:
        return None
    if isinstance(raw, dict):
        return name.strip(), raw, False
    if isinstance(raw, str) and not raw.strip():
        return name.strip(), {}, False
    if isinstance(raw, str):  # OpenAI style: the arguments as a JSON string
        parsed = _parse_object(raw)
        if parsed is not None:
            return name.strip(), parsed[0], parsed[1]
    return None


def _parse_object(body: str) -> tuple[dict[str, Any], bool] | None:
    if not body.strip().startswith("{"):
        return None
    try:
        parsed = parse_arguments(body)
    except ModelArgumentsError:
        return None
    return parsed.args, parsed.repaired


def _strict_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _unfence(body: str) -> str:
    match = _FENCED_BODY.match(body)
    return match.group(1) if match else body.strip()


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def _canonical(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _call_id(ordinal: int, name: str, args: dict[str, Any]) -> str:
    digest = hashlib.sha256(f"{ordinal}\x00{name}\x00{_canonical(args)}".encode("utf-8", "surrogatepass"))
    return "scv_" + digest.hexdigest()[:24]
