"""Flatten wide or deep tool schemas into dotted parameter names, and nest the model's arguments back.

DeepSeek drops parameters on deeply nested or very wide schemas (DESIGN §4). A schema with more than
:data:`MAX_LEAVES` leaf parameters or deeper than :data:`MAX_DEPTH` levels is rewritten so that every leaf is a
top-level property named by its path: ``{"a": {"b": x}}`` becomes ``"a.b"``. The :class:`FlatMap` remembers each
dotted name's path, and :func:`unflatten_args` rebuilds the nested arguments before the tool runs.

A flattened leaf is ``required`` only when it and every object on its path are required: a leaf under an optional
object stays optional (the object may be absent altogether).

The output is canonical (sorted keys, sorted ``required``): it becomes part of the frozen request prefix, so equal
schemas must give equal bytes whatever order their keys came in.

Local references (``#/$defs/X``, ``#/definitions/X``, as pydantic emits for nested models) are followed, as are
``allOf: [X]`` and ``anyOf: [X, {"type": "null"}]`` (an optional nested model). A recursive reference is a leaf.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sessions.repair.errors import ToolSchemaError
from sessions.wire.messages import FunctionSchema, ToolSchema

MAX_LEAVES = 10
MAX_DEPTH = 2
SEP = "."

Path = tuple[str, ...]


@dataclass(frozen=True)
class FlatMap:
    """How a flattened tool's dotted argument names nest back: ``paths`` maps a dotted name to its path."""

    paths: tuple[tuple[str, Path], ...]
    """Sorted by dotted name. Only leaves that sit inside an object appear; top-level leaves keep their name."""

    @cached_property
    def by_name(self) -> dict[str, Path]:
        return dict(self.paths)


@dataclass(frozen=True, slots=True)
class _Leaf:
    path: Path
    schema: dict[str, Any]
    required: bool


# ------------------------------------------------------------------------------------------------------ schema walk


def _resolve(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> tuple[Any, tuple[str, ...], bool]:
    """Follow ``$ref`` / ``allOf: [X]`` / ``anyOf: [X, null]``: (resolved node, ref stack, optional?)."""
    optional = False  # pragma: no mutate - None, the only mutant, is as false
    for _ in range(64):  # bounded: a chain of references longer than this is treated as it stands
        if not isinstance(node, dict):
            return node, stack, optional
        ref = node.get("$ref")
        if isinstance(ref, str) and set(node) <= {"$ref", "description", "title"}:
            name = _local_ref_name(ref)
            if name is None or name in stack or name not in defs:
                return node, stack, optional
            node, stack = defs[name], (*stack, name)
            continue
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and set(node) <= {"allOf", "description", "title", "default"}:
            node = all_of[0]
            continue
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and set(node) <= {"anyOf", "description", "title", "default"}:
            non_null = [s for s in any_of if not (isinstance(s, dict) and s.get("type") == "null")]
            if len(non_null) == 1:
                inner, inner_stack, _ = _resolve(non_null[0], defs, stack)
                if _properties(inner) is not None:
                    return inner, inner_stack, True  # resolved already
        return node, stack, optional
    return node, stack, optional


def _local_ref_name(ref: str) -> str | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return None


def _properties(node: Any) -> dict[str, Any] | None:
    """The properties of an object schema that can be flattened, else None (a leaf)."""
    if not isinstance(node, dict):
        return None
    props = node.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    extra = node.get("additionalProperties")
    if extra not in (None, False):
        return None  # a free-form map: its keys are data, not parameter names
    if node.get("type", "object") != "object":
        return None
    return props


def _required(node: Mapping[str, Any]) -> frozenset[str]:
    req = node.get("required")
    return frozenset(r for r in req if isinstance(r, str)) if isinstance(req, list) else frozenset()


def _walk(
    node: Mapping[str, Any], defs: Mapping[str, Any], path: Path, stack: tuple[str, ...], required: bool
) -> Iterator[_Leaf]:
    props = _properties(node) or {}
    req = _required(node)
    for key, child in props.items():
        resolved, child_stack, optional = _resolve(child, defs, stack)
        child_required = required and key in req and not optional
        if _properties(resolved) is not None:
            yield from _walk(resolved, defs, (*path, key), child_stack, child_required)
        else:
            yield _Leaf((*path, key), child if isinstance(child, dict) else {}, child_required)


def _defs(parameters: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        value = parameters.get(key)
        if isinstance(value, dict):
            out.update(value)
    return out


# --------------------------------------------------------------------------------------------------------- public


def needs_flattening(leaves: list[_Leaf]) -> bool:
    return len(leaves) > MAX_LEAVES or any(len(leaf.path) > MAX_DEPTH for leaf in leaves)


def flatten_schema(tool: ToolSchema) -> tuple[ToolSchema, FlatMap | None]:
    """The tool as the model should see it, and how to nest its arguments back (None: unchanged, nothing to do).

    Raises :class:`ToolSchemaError` when a dotted name collides with another parameter.
    """
    params = tool.function.parameters
    if _properties(params) is None:
        return tool, None
    defs = _defs(params)
    leaves = list(_walk(params, defs, (), (), True))
    if not needs_flattening(leaves) or all(len(leaf.path) == 1 for leaf in leaves):
        return tool, None  # fine as is, or wide but already flat: dotted names would change nothing
    properties: dict[str, Any] = {}
    required: list[str] = []
    paths: list[tuple[str, Path]] = []
    for leaf in leaves:
        name = SEP.join(leaf.path)
        if name in properties:
            raise ToolSchemaError(
                f"Tool {tool.function.name!r}: the flattened parameter name {name!r} is used twice "
                f"(a parameter name contains {SEP!r}); rename the parameter so that dotted paths stay unique."
            )
        properties[name] = leaf.schema
        if leaf.required:
            required.append(name)
        if len(leaf.path) > 1:
            paths.append((name, leaf.path))
    kept = {k: v for k, v in params.items() if k not in ("required", "$defs", "definitions")}
    flat: dict[str, Any] = {**kept, "type": "object", "properties": properties}
    if required:
        flat["required"] = sorted(required)
    if '"$ref"' in json.dumps(properties):
        flat.update({k: params[k] for k in ("$defs", "definitions") if k in params})
    # A fresh copy (nothing shared with the tool's own schema) in canonical key order; loads undoes any escapes.
    canonical = json.loads(json.dumps(flat, sort_keys=True))
    schema = ToolSchema(
        function=FunctionSchema(
            name=tool.function.name,
            description=tool.function.description,
            parameters=canonical,
            strict=tool.function.strict,
        )
    )
    return schema, FlatMap(tuple(sorted(paths)))


def unflatten_args(args: Mapping[str, Any], flatmap: FlatMap | None) -> dict[str, Any]:
    """Nest dotted arguments back along their paths. Names the map does not know pass through unchanged.

    A model that answers a flattened schema in the nested form anyway is fine too: nested objects are merged, and a
    dotted leaf wins over a conflicting nested value.
    """
    if flatmap is None:
        return dict(args)
    by_name = flatmap.by_name
    out: dict[str, Any] = {}
    for key, value in args.items():
        path = by_name.get(key)
        if path is None:
            _merge(out, key, value)
            continue
        node = out
        for part in path[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = {}
                node[part] = nxt
            node = nxt
        node[path[-1]] = value
    return out


def flatten_args(args: Mapping[str, Any], flatmap: FlatMap) -> dict[str, Any]:
    """The inverse of :func:`unflatten_args`: nested arguments as the model sees a flattened tool (tests, scripts)."""
    out: dict[str, Any] = {}
    prefixes = {path[:i] for _, path in flatmap.paths for i in range(1, len(path))}  # pragma: no mutate - () is no key
    paths = {path: name for name, path in flatmap.paths}

    def visit(node: Mapping[str, Any], path: Path) -> None:
        for key, value in node.items():
            here = (*path, key)
            if here in paths:
                out[paths[here]] = value
            elif here in prefixes and isinstance(value, dict):
                visit(value, here)
            else:
                out[SEP.join(here)] = value

    visit(args, ())
    return out


def _merge(out: dict[str, Any], key: str, value: Any) -> None:
    existing = out.get(key)
    if isinstance(existing, dict) and isinstance(value, dict):
        for k, v in value.items():
            _merge(existing, k, v)
    elif key not in out:  # else a dotted leaf already placed here wins
        out[key] = copy.deepcopy(value)  # never write into the caller's dict
