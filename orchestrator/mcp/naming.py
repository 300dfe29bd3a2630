"""How a server's tool is named and described to the model: ``mcp__<server>__<tool>``, its input schema canonicalised.

The bytes must not depend on the order a server happens to list things in: keys are sorted at every level (the order
of ``required`` and of enum values is the server's and is kept), and pydantic's ``title`` noise is dropped, so the same
tools give the same prefix every run (DESIGN §3.7).
"""

from __future__ import annotations

import json
import re
from typing import Any

NAME_LIMIT = 64
"""The longest function name the API accepts."""
DESCRIPTION_LIMIT = 2_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_NOISE = frozenset({"title", "$schema"})


def tool_name(server: str, tool: str) -> str | None:
    """``mcp__<server>__<tool>`` with characters the API refuses made ``_``; None when longer than the API allows."""
    name = f"mcp__{server}__{_UNSAFE.sub('_', tool)}"
    return name if len(name) <= NAME_LIMIT else None


def canonical_schema(node: Any, *, names: bool = False) -> Any:
    """``node`` with every object's keys sorted and ``title`` / ``$schema`` dropped (not property names)."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key in sorted(node):
            if not names and key in _NOISE:
                continue
            out[key] = canonical_schema(node[key], names=not names and key in _SCHEMA_MAPS)
        return out
    if isinstance(node, list):
        return [canonical_schema(item) for item in node]
    return node


def parameters(input_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The function's parameters: the canonical input schema, an empty object when the server gives none."""
    schema = canonical_schema(dict(input_schema or {}))
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return json.loads(json.dumps(schema, sort_keys=True, ensure_ascii=False))  # type: ignore[no-any-return]


def description(text: str | None, title: str | None) -> str:
    """The tool's description (or title), whitespace-trimmed and bounded."""
    body = " ".join((text or title or "").split())
    return body if len(body) <= DESCRIPTION_LIMIT else body[: DESCRIPTION_LIMIT - 1] + "…"
