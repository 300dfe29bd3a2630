"""Lean, deterministic JSON schemas from pydantic argument models.

These bytes sit in every request prefix (DESIGN §3.1), so they carry only what the model needs: types, constraints,
descriptions, ``required`` and useful defaults. Dropped: pydantic's ``title`` noise, ``default: null``, the
``anyOf [X, null]`` wrapping of optional fields, ``additionalProperties``, and ``$defs`` (references are inlined).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_DROP = frozenset({"title", "additionalProperties"})


def lean_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema for a tool's ``parameters``: an object schema, compact and stable."""
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.get("$defs", {})
    out = _lean(raw, defs, ())
    out.pop("description", None)  # the tool's own description says what the call does
    return out


def _lean(node: dict[str, Any], defs: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive argument model {name!r} cannot be inlined into a tool schema")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _lean(merged, defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or key == "$defs":
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            out[key] = {prop: _lean(sub, defs, seen) for prop, sub in value.items()}
        elif key in ("items", "additionalItems") and isinstance(value, dict):
            out[key] = _lean(value, defs, seen)
        elif key in ("anyOf", "oneOf", "allOf"):
            options = [_lean(sub, defs, seen) for sub in value if sub != {"type": "null"}]
            if len(options) == 1:
                out.update({k: v for k, v in options[0].items() if k not in out})
            else:
                out[key] = options
        else:
            out[key] = value
    return out
