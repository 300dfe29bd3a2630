"""Front matter of a Markdown extension file: ``---`` lines around ``key: value`` (YAML's simple form, as Claude
Code writes it) or ``key = value`` (TOML's) pairs, then the body.

Only flat keys are read: a value is a string (quotes optional), or a list written ``[a, b]``. A file without front
matter is all body. Nothing here evaluates anything.
"""

from __future__ import annotations

import re

_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*[:=]\s*(.*)$")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _value(raw: str) -> str | list[str]:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [_unquote(part) for part in raw[1:-1].split(",") if part.strip()]
    return _unquote(raw)


def parse_front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """(the front matter's keys, the body). Keys are lower-cased with ``-`` as ``_`` (``allowed-tools`` →
    ``allowed_tools``)."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return {}, text
    meta: dict[str, str | list[str]] = {}
    for line in lines[1:end]:
        found = _PAIR.match(line.strip())
        if found:
            meta[found.group(1).lower().replace("-", "_")] = _value(found.group(2))
    return meta, "\n".join(lines[end + 1 :]).lstrip("\n")


def text_of(meta: dict[str, str | list[str]], key: str) -> str:
    value = meta.get(key, "")
    return ", ".join(value) if isinstance(value, list) else value
