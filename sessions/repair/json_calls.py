"""Tool calls written as JSON objects in text: the shapes such an object takes, and where in a text one is taken.

The object (:func:`call_shaped`) is one of

* ``{"name": N, "arguments": {...}}`` (or ``"parameters"``; the arguments may be a JSON string, OpenAI style);
* the OpenAI envelope ``{"type": "function", "function": {"name": N, "arguments": "{...}"}}``;
* the R1 free-form variant ``{"tool_name": N, "tool_args": {...}}``.

It is taken from (shapes ``fenced_json`` and ``prose_json``)

* a fenced block whose whole body is the object, or a text that is nothing but the object;
* prose: ``… so I should call {"name": "read_file", "arguments": {"path": "a.py"}} to check``. Not taken from prose:
  an object inside any fenced code block or tool-call markup, wrapped in quotes or inline backticks, introduced as an
  example (``for example``, ``e.g.``, ``looks like`` …) on its line, or negated or past (``not``, ``instead of``,
  ``already`` …) in its clause. Only a complete object counts: prose cut off inside one is no call.

Loose JSON (a trailing comma, Python ``True`` / ``False`` / ``None``, smart or single quotes) is read by
:func:`~sessions.repair.truncation.parse_arguments` (json-repair) and marked ``repaired``; in a fenced block only when
the block is untagged or tagged as JSON (a Python dict literal in a ```` ```python ```` block is code, not a call).
Work is bounded: strict parsing is linear; a brace's end is found once whatever number of objects enclose it, within
:data:`SCAN_BUDGET_FACTOR` times the text's length in all; json-repair reads only a balanced span that has a call's
key, at most :data:`MAX_LENIENT_PARSES` of them per text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sessions.repair.errors import ModelArgumentsError
from sessions.repair.truncation import MAX_REPAIR_CHARS, parse_arguments

JsonShape = Literal["fenced_json", "prose_json"]


@dataclass(frozen=True, slots=True)
class JsonCall:
    start: int
    end: int
    name: str
    args: dict[str, Any]
    repaired: bool
    shape: JsonShape


_DECODER = json.JSONDecoder()
_FENCE = re.compile(r"`{3,}([A-Za-z0-9_+-]*)[ \t]*\r?\n?\s*")  # a stray backtick before the fence is common
_FENCE_CLOSE = re.compile(r"\s*```")
_FENCE_NEXT = re.compile(r"```")
_LENIENT_FENCES = frozenset({"", "json", "jsonc", "json5"})
_OBJECT_START = re.compile(r"\{\{?\s*[\"“”'‘’]")  # an object whose first key is quoted (its braces maybe doubled)
_NOT_PROSE = re.compile(
    r"```.*?(?:```|\Z)"
    r"|<[|｜]?(?:DSML[|｜])?invoke\b.*?</[|｜]?(?:DSML[|｜])?invoke>"
    r"|<tool_call>.*?</tool_call>"
    r"|<function=.*?</function>"
    r"|<[|｜]tool[▁_ ]call[▁_ ]begin[|｜]>.*?(?:<[|｜]tool[▁_ ]call[▁_ ]end[|｜]>|\Z)",
    re.DOTALL,
)
SCAN_BUDGET_FACTOR = 8
MAX_LENIENT_PARSES = 64
"""Loose objects with a call's key read with json-repair per text at most (each costs about 0.3 ms)."""
_CALL_KEY = re.compile(r"[\"“'‘]\s*(?:name|tool_name|function)\s*[\"”'’]\s*:")
_QUOTES = "\"'`“”‘’「」«»"
_EXAMPLE = re.compile(
    r"\b(?:for example|for instance|e\.g\.|i\.e\.|such as|an example|example:|looks like|look like|would look"
    r"|the format is|format:|documented as|shaped like)",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no need to|instead of|rather than|avoid|without|already|previously|earlier)\b|n't\b|n’t\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.,;!?。，；！？]|\b(?:so|then|but|and)\b", re.IGNORECASE)


def call_shaped(obj: dict[str, Any]) -> tuple[str, dict[str, Any], bool] | None:
    """(name, arguments, repaired) when ``obj`` is one of the call shapes above, else None."""
    fn = obj.get("function")
    if isinstance(fn, dict) and "name" not in obj and "tool_name" not in obj:
        obj = fn
    name = obj.get("name")
    keys: tuple[str, ...] = ("arguments", "parameters")
    if not isinstance(name, str):
        name, keys = obj.get("tool_name"), ("tool_args",)
    if not isinstance(name, str) or not any(key in obj for key in keys):
        return None
    raw = next(obj[key] for key in keys if key in obj)
    if isinstance(raw, dict):
        return name.strip(), raw, False
    if isinstance(raw, str) and not raw.strip():
        return name.strip(), {}, False
    if isinstance(raw, str):  # OpenAI style: the arguments as a JSON string
        parsed = parse_object(raw)
        if parsed is not None:
            return name.strip(), parsed[0], parsed[1]
    return None


def undoubled(body: str) -> str | None:
    """``body`` with its doubled braces made single (``{{"name": …}}``, a format template's escaping copied), strings
    left as they are; None when its braces outside strings are not all doubled."""
    out: list[str] = []
    i, n, in_string, escaped = 0, len(body), False, False
    while i < n:
        c = body[i]
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            i += 1
        elif c in "{}":
            if body[i : i + 2] != c * 2:
                return None
            out.append(c)
            i += 2
        else:
            in_string = c == '"'
            out.append(c)
            i += 1
    return "".join(out)


def _strict_undoubled(body: str) -> dict[str, Any] | None:
    text = undoubled(body.strip())
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def parse_object(body: str) -> tuple[dict[str, Any], bool] | None:
    """The JSON object ``body`` holds, strict or repaired: (object, repaired); None when it holds none. Doubled braces
    are made single before anything is repaired (json-repair would read them, but lose escapes inside strings)."""
    if not body.strip().startswith("{"):
        return None
    if body.strip().startswith("{{"):
        single = _strict_undoubled(body)
        if single is not None:
            return single, True
    try:
        parsed = parse_arguments(body)
    except ModelArgumentsError:
        return None
    return parsed.args, parsed.repaired


def _shaped(body: str, start: int, end: int, shape: JsonShape) -> JsonCall | None:
    parsed = parse_object(body)
    call = call_shaped(parsed[0]) if parsed is not None else None
    if parsed is None or call is None:
        return None
    return JsonCall(start, end, call[0], call[1], parsed[1] or call[2], shape)


def fenced_json(text: str) -> Iterator[JsonCall]:
    """A text that is nothing but a call object, or call objects that are the whole body of a fenced block."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        whole = _shaped(stripped, 0, len(text), "fenced_json")
        if whole is not None:
            yield whole
            return
    for fence in _FENCE.finditer(text):
        at = fence.end()
        if not text.startswith("{", at):
            continue
        found = _strict_fenced(text, fence.start(), at)
        close = _FENCE_NEXT.search(text, at)
        if found is None and close is not None and fence.group(1).lower() in _LENIENT_FENCES:
            body = text[at : close.start()].rstrip()
            if body.endswith("}"):
                found = _shaped(body, fence.start(), close.end(), "fenced_json")
        if found is not None:
            yield found


def _strict_fenced(text: str, start: int, at: int) -> JsonCall | None:
    try:
        value, obj_end = _DECODER.raw_decode(text, at)
    except (ValueError, RecursionError):
        return None
    close = _FENCE_CLOSE.match(text, obj_end)
    if close is None or not isinstance(value, dict):
        return None
    call = call_shaped(value)
    return JsonCall(start, close.end(), call[0], call[1], call[2], "fenced_json") if call is not None else None


def prose_json(text: str) -> Iterator[JsonCall]:
    """Call objects written inside prose, outside code blocks and markup, that the text does not discuss."""
    if "{" not in text:
        return
    skip = [(m.start(), m.end()) for m in _NOT_PROSE.finditer(text)]
    braces = _Braces(text)
    resume_at = 0
    for start in _OBJECT_START.finditer(text):
        at = start.start()
        if at < resume_at or any(at in range(a, b) for a, b in skip):
            continue
        read = _object_at(text, at, braces)
        if read is None and text.startswith("{{", at):
            # A doubled opening brace closed once (Qwen2.5-Coder 1.5B: "{{"name": …}}" one brace short at the
            # end): the call is the object that starts at the inner brace.
            at += 1
            read = _object_at(text, at, braces)
        if read is None:
            continue
        end, value, repaired = read
        resume_at = end  # an object (a call or not) is read once: nothing inside it is a call of its own
        if not isinstance(value, dict) or _discussed(text, at, end):
            continue
        call = call_shaped(value)
        if call is not None:
            yield JsonCall(at, end, call[0], call[1], repaired or call[2], "prose_json")


def _object_at(text: str, at: int, braces: _Braces) -> tuple[int, Any, bool] | None:
    """(end, value, repaired) of the JSON object starting at ``at``; None when there is no complete one."""
    try:
        value, end = _DECODER.raw_decode(text, at)
    except (ValueError, RecursionError):
        pass
    else:
        return end, value, False
    balanced = braces.end(at)
    if balanced is None or braces.repairs_left <= 0 or not _CALL_KEY.search(text, at, balanced):
        return None
    braces.repairs_left -= 1
    parsed = parse_object(text[at:balanced])
    return (balanced, parsed[0], True) if parsed is not None else None


class _Braces:
    """Where each ``{`` of a text closes, brace-balanced with strings in straight or smart double quotes skipped.

    One scan answers for every brace it passes outside a string (a brace outside a string is in the same state
    whichever scan reaches it), so the work stays linear however many unclosed objects a looping model writes.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.closes: dict[int, int | None] = {}
        self.budget = SCAN_BUDGET_FACTOR * len(text) + MAX_REPAIR_CHARS
        """Characters left to scan: braces inside strings are not memoized, so a text of unclosed smart-quoted
        strings could make every start scan afresh; past the budget, no more lenient objects are looked for."""
        self.repairs_left = MAX_LENIENT_PARSES

    def end(self, start: int) -> int | None:
        if start not in self.closes and self.budget > 0:
            self._scan(start)
        return self.closes.get(start)

    def _scan(self, start: int) -> None:
        text, stack = self.text, [start]
        stop = min(len(text), start + MAX_REPAIR_CHARS)
        close: str | None = None
        escaped = False  # pragma: no mutate - None, the only mutant kept, is as false
        i = start + 1
        while i < stop:
            c = text[i]
            i += 1
            if close is not None:
                if escaped:
                    escaped = False  # pragma: no mutate - None is as false
                elif c == "\\":
                    escaped = True
                elif c == close:
                    close = None
            elif c == '"':
                close = '"'
            elif c == "“":
                close = "”"
            elif c == "{":
                if i - 1 in self.closes:  # answered by an earlier scan
                    known = self.closes[i - 1]
                    if known is None:
                        break  # it never closes, so nothing around it does
                    i = known
                else:
                    stack.append(i - 1)
            elif c == "}":
                self.closes[stack.pop()] = i
                if not stack:
                    break
        for open_at in stack:
            self.closes[open_at] = None
        self.budget -= i - start


def _discussed(text: str, start: int, end: int) -> bool:
    """The object at ``text[start:end]`` is quoted, an example, or negated: the model talks about it."""
    before = text[max(0, start - 2) : start].strip()
    after = text[end : end + 2].strip()
    if before and before[-1] in _QUOTES and after and after[0] in _QUOTES:
        return True
    newline = text.rfind("\n", 0, start)  # pragma: no mutate  — None is 0; from 1, a "\n" at 0 no regex sees
    line_start = newline + 1
    line = text[max(line_start, start - 200) : start]
    if _EXAMPLE.search(line):
        return True
    breaks = list(_CLAUSE_BREAK.finditer(line))
    clause = line[breaks[-1].end() :] if breaks else line
    return _NEGATION.search(clause[-80:]) is not None
