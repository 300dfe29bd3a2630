"""Text from a model or a tool, made safe to show on a terminal: control characters become visible, never executed.

A model (or a file it read, or a command it ran) can put escape sequences in its text. Written to a terminal as they
are, ``ESC[2K ESC[1A`` erases the line above, so a plan's verify command could hide itself from the very review that
approves it. Everything we render from such a source goes through :func:`neutralise` (a string) or
:func:`neutralise_text` (a rich ``Text``, styles kept) first; a pydantic model (a plan) goes through
:func:`neutralise_model`.

What is made visible: every C0 control character except newline and tab (``ESC`` becomes ``␛``, ``CR`` ``␍``: the
Unicode control pictures), ``DEL`` (``␡``), the C1 controls ``U+0080``–``U+009F`` (``\\x9b``), the bidirectional
overrides and isolates that can make text read differently from what it is (``\\u202e``), and lone surrogates (which a
terminal cannot encode). A ``CR LF`` line end is kept as a plain newline.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel
from rich.text import Span, Text

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
KEPT = "\n\t"


def _visible(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


_UNSAFE_CODES = [
    *range(0x20),
    0x7F,
    *range(0x80, 0xA0),
    *map(ord, BIDI_CONTROLS),
    *range(0xD800, 0xE000),
]
_TABLE = {code: _visible(code) for code in _UNSAFE_CODES if chr(code) not in KEPT}
_UNSAFE = re.compile("\r\n|[" + "".join(re.escape(chr(code)) for code in sorted(_TABLE)) + "]")


def is_safe(text: str) -> bool:
    """True when ``text`` has nothing to neutralise."""
    return _UNSAFE.search(text) is None


def neutralise(text: str) -> str:
    """``text`` with every control character shown instead of executed (newlines and tabs kept as layout)."""
    if is_safe(text):
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


def neutralise_text(text: Text) -> Text:
    """A rich ``Text`` with its control characters made visible, every span's style kept (``text`` itself when there
    is nothing to change)."""
    plain = text.plain
    if is_safe(plain):
        return text
    parts: list[str] = []
    moved: list[int] = []  # moved[i]: where offset i of the old text is in the new one
    position = length = 0
    for match in _UNSAFE.finditer(plain):
        kept, shown = plain[position : match.start()], neutralise(match.group())
        moved.extend(range(length, length + len(kept)))
        length += len(kept)
        moved.extend([length] * len(match.group()))
        length += len(shown)
        parts += [kept, shown]
        position = match.end()
    moved.extend(range(length, length + len(plain) - position + 1))
    parts.append(plain[position:])
    out = text.blank_copy("".join(parts))
    out.spans = [Span(moved[span.start], moved[span.end], span.style) for span in text.spans]
    return out


def _clean(value: Any) -> Any:
    if type(value) is str:  # not str enums: they are our own values, and must stay enums
        return neutralise(value)
    if isinstance(value, BaseModel):
        return neutralise_model(value)
    if isinstance(value, tuple):
        return tuple(_clean(item) for item in value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    return value


M = TypeVar("M", bound=BaseModel)


def neutralise_model(model: M) -> M:
    """A copy of ``model`` (a plan, say) with every string in it neutralised, for display only: it is not validated
    again and must never be saved or sent anywhere."""
    changes = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        cleaned = _clean(value)
        if cleaned != value:
            changes[name] = cleaned
    return model.model_copy(update=changes) if changes else model
