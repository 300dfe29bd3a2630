"""Tool schemas: lean (no pydantic noise), deterministic, canonical order — they go into every request prefix."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from sessions.tools import ToolRegistry, default_registry
from sessions.tools.schema import lean_schema
from sessions.wire.messages import encode_tools


def _keys(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            _keys(value, found)
    elif isinstance(node, list):
        for value in node:
            _keys(value, found)
    return found


class Inner(BaseModel):
    title: str = Field(description="a property that happens to be called title")
    mode: Literal["a", "b"] = "a"


class Outer(BaseModel):
    """Docstring that must not reach the wire."""

    items: list[Inner]
    limit: int | None = Field(None, ge=1, description="optional")
    flag: bool = False


def test_lean_schema_drops_noise_and_inlines_refs() -> None:
    schema = lean_schema(Outer)
    assert schema == {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "description": "a property that happens to be called title"},
                        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    },
                    "required": ["title"],
                },
            },
            "limit": {"type": "integer", "minimum": 1, "description": "optional"},
            "flag": {"type": "boolean", "default": False},
        },
        "required": ["items"],
    }


def test_builtin_schemas_are_lean() -> None:
    for schema in default_registry().schemas():
        params = schema.function.parameters
        keys = _keys(params, set()) - set(_property_names(params))
        assert not keys & {"title", "$defs", "$ref", "anyOf", "additionalProperties"}, schema.function.name
        assert "null" not in json.dumps(params)
        assert params["type"] == "object"


def _property_names(node: Any) -> list[str]:
    names: list[str] = []
    if isinstance(node, dict):
        names += list(node.get("properties", {}))
        for value in node.values():
            names += _property_names(value)
    elif isinstance(node, list):
        for value in node:
            names += _property_names(value)
    return names


def test_schema_bytes_are_stable_and_canonical() -> None:
    first = encode_tools(default_registry().schemas())
    second = encode_tools(default_registry(use_ripgrep=False).schemas())
    assert first == second
    tools = list(default_registry())
    reversed_registry = ToolRegistry(reversed(tools))
    assert reversed_registry.schemas() == default_registry().schemas()
    assert [s.function.name for s in reversed_registry.schemas()] == sorted(t.name for t in tools)
    assert default_registry().names() == ("bash", "edit_file", "glob", "grep", "list_dir", "read_file", "write_file")
    # Cost per task: the whole tool block stays small (it is sent, and mostly cached, on every request).
    assert len(first) < 4_500
