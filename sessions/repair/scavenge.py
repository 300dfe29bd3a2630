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
* ``function_attrs``: ``<function name="NAME" arguments='{...}'/>``, often inside ``<tools>…</tools>`` (a real
  planner wrote it, issue 44); the arguments in single or double quotes, HTML entities read;
* ``fenced_json`` / ``bare_json``: a fenced JSON call object, or a whole text that is exactly one
  (:mod:`sessions.repair.json_calls` says which objects are calls: ``{"name", "arguments"|"parameters"}``, the
  OpenAI ``{"type": "function", "function": {...}}`` envelope, the R1 ``{"tool_name", "tool_args"}`` variant; loose
  JSON is repaired);
* ``prose_json``: such an object written inside prose, unless the text quotes it, gives it as an example or negates
  it (:func:`~sessions.repair.json_calls.prose_json`).

Only names of known tools count: anything else is prose, except a call in ``content`` as markup or a call object of
a tool that does not exist (:func:`stray_calls`), which the caller answers as an unknown tool. A name that repeats
one known tool (``read_fileread_file``, a stalled stream) counts as that tool, and :attr:`ScavengedCall.written_name`
keeps what was written. Each call gets a deterministic id derived from its content (``scv_`` + a short sha256),
never a random one. Nothing here raises on any input. Whether a candidate is *taken* (its arguments validate, the
per-reply cap) is decided by the caller, :func:`~sessions.repair.prepare.prepare_calls`.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from sessions.repair.json_calls import call_shaped, fenced_json, parse_object, prose_json
from sessions.repair.stall import repeated_name

Shape = Literal[
    "special_tokens",
    "dsml",
    "tool_call_tag",
    "function_tag",
    "function_attrs",
    "fenced_json",
    "bare_json",
    "prose_json",
]
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
    written_name: str = ""
    """The name as the model wrote it, when that differs from :attr:`name` (a stall repeated it); else empty."""
    bodies: tuple[str, ...] = ()
    """Parameters whose value is the raw text body of a DSML ``string="true"`` tag, untrimmed."""


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    name: str
    args: dict[str, Any]
    repaired: bool
    shape: Shape
    open_ended: bool = False
    written_name: str = ""
    bodies: tuple[str, ...] = ()


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
_FUNCTION_ATTRS = re.compile(
    r"""<function\s+name\s*=\s*(["'])([^"'<>\s]+)\1\s+(?:arguments|parameters|args)\s*=\s*"""
    r"""(?:'(.*?)'|"(.*?)")\s*(?:/>|>\s*</function>|>)""",
    re.DOTALL,
)
_FENCED_BODY = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*(.*?)\s*```\s*$", re.DOTALL)


def scavenge_calls(
    *, content: str | None, reasoning: str | None, known_tools: Collection[str]
) -> tuple[ScavengedCall, ...]:
    """Calls of known tools written into ``content``, or failing that into ``reasoning``; in text order.

    Content wins because it is what the model meant to say; reasoning is searched only when content has no call.
    The same call written twice (same name and arguments) counts once.
    """
    sources: tuple[tuple[Source, str | None], ...] = (("content", content), ("reasoning", reasoning))
    for src, text in sources:
        if not text:
            continue
        found = find_calls(text, known_tools)
        if found:
            return tuple(
                ScavengedCall(
                    _call_id(i, f.name, f.args), f.name, f.args, f.repaired, src, f.shape, f.written_name, f.bodies
                )
                for i, f in enumerate(found)
            )
    return ()


def stray_calls(*, content: str | None, known_tools: Collection[str]) -> tuple[ScavengedCall, ...]:
    """Calls of tools that do not exist, written into ``content`` as markup or as a call object (bare or fenced), in
    text order; asked only when :func:`scavenge_calls` found none. The caller answers each as it would a native call
    of an unknown tool, with the valid names, so the model hears that its call went nowhere (a real 0.5B model's
    ``{"name": "add", ...}`` ended its turn unanswered). Never from prose or from reasoning, where a made-up name is
    only thought about."""
    if not content:
        return ()

    def unknown(f: _Found) -> _Found | None:
        stray = f.shape != "prose_json" and f.name.strip() and f.name not in known_tools
        return f if stray and repeated_name(f.name, known_tools) is None else None

    return tuple(
        ScavengedCall(_call_id(i, f.name, f.args), f.name, f.args, f.repaired, "content", f.shape)
        for i, f in enumerate(_calls(content, unknown))
    )


def find_calls(text: str, known_tools: Collection[str]) -> list[_Found]:
    """Every call of a known tool in ``text``, in order; overlapping matches keep the outermost, duplicates drop."""

    def known(f: _Found) -> _Found | None:
        if f.name in known_tools:
            return f
        name = repeated_name(f.name, known_tools)
        return replace(f, name=name, written_name=f.name) if name is not None else None

    return _calls(text, known)


def _calls(text: str, keep: Callable[[_Found], _Found | None]) -> list[_Found]:
    """The candidates ``keep`` takes (as it returns them), in order, outermost first, duplicates dropped."""
    candidates: list[_Found] = []
    finders = (_special_tokens, _dsml, _tool_call_tags, _function_tags, _function_attrs, _fenced_json, _prose_json)
    for finder in finders:
        for f in finder(text):
            if (kept := keep(f)) is not None:
                candidates.append(kept)
    closed_starts = [f.start for f in candidates if not f.open_ended]
    # Markup cut off at the end of the text never swallows a complete call written after it. (No complete call starts
    # where cut-off markup does: only special tokens are cut off, and no other shape starts with their opening.)
    candidates = [
        f
        for f in candidates
        if not f.open_ended or not any(f.start < start for start in closed_starts)  # pragma: no mutate - see above
    ]
    candidates.sort(key=lambda f: (f.start, -f.end))
    out: list[_Found] = []
    seen: set[tuple[str, str]] = set()
    last_end = 0  # no call starts before the text
    for found in candidates:
        if found.start < last_end:
            continue
        last_end = found.end
        key = (found.name, _canonical(found.args))
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
        parsed = parse_object(_unfence(body))
        if parsed is not None:
            yield _Found(begin.start(), end, name.strip(), *parsed, "special_tokens", open_ended=stop == len(text))


def _dsml(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _INVOKE_BEGIN, _INVOKE_END):
        body = text[begin.end() : stop]
        params = list(_DSML_PARAM.finditer(body))
        if params:
            args: dict[str, Any] = {}
            bodies: list[str] = []
            for p in params:
                key, is_string, value = p.group(1), p.group(2), p.group(3)
                args[key] = value if is_string == "true" else _json_or_text(value)
                if is_string == "true":
                    bodies.append(key)
            yield _Found(begin.start(), end, begin.group(1).strip(), args, False, "dsml", bodies=tuple(bodies))
        elif not body.strip():
            yield _Found(begin.start(), end, begin.group(1).strip(), {}, False, "dsml")
        else:
            parsed = parse_object(_unfence(body))
            if parsed is not None:
                yield _Found(begin.start(), end, begin.group(1).strip(), *parsed, "dsml")


def _tool_call_tags(text: str) -> Iterator[_Found]:
    for begin, stop, end in _blocks(text, _TOOL_CALL_BEGIN, _TOOL_CALL_END):
        parsed = parse_object(_unfence(text[begin.end() : stop]))
        if parsed is None:
            continue
        call = call_shaped(parsed[0])
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
            parsed = parse_object(_unfence(body))
            if parsed is not None:
                yield _Found(begin.start(), end, begin.group(1), *parsed, "function_tag")


def _function_attrs(text: str) -> Iterator[_Found]:
    for match in _FUNCTION_ATTRS.finditer(text):
        raw = match.group(3) if match.group(3) is not None else match.group(4)
        body = html.unescape(raw)
        parsed = ({}, False) if not body.strip() else parse_object(body)
        if parsed is not None:
            yield _Found(match.start(), match.end(), match.group(2), *parsed, "function_attrs")


def _fenced_json(text: str) -> Iterator[_Found]:
    for c in fenced_json(text):
        yield _Found(c.start, c.end, c.name, c.args, c.repaired, c.shape)


def _prose_json(text: str) -> Iterator[_Found]:
    for c in prose_json(text):
        yield _Found(c.start, c.end, c.name, c.args, c.repaired, c.shape)


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
    """The arguments as one string, whatever their key order (they are JSON values: json.loads or json-repair made
    them)."""
    return json.dumps(
        args,
        ensure_ascii=False,  # pragma: no mutate - None, the only mutant, is as false
        sort_keys=True,
        separators=(",", ":"),
    )


def _call_id(ordinal: int, name: str, args: dict[str, Any]) -> str:
    digest = hashlib.sha256(f"{ordinal}\x00{name}\x00{_canonical(args)}".encode(errors="surrogatepass"))
    return "scv_" + digest.hexdigest()[:24]
