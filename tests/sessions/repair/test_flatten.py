"""Flattening wide or deep schemas into dotted names, and nesting the arguments back."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from sessions.repair import FlatMap, ToolSchemaError, flatten_args, flatten_schema, unflatten_args
from sessions.wire.messages import FunctionSchema, ToolSchema, encode_tools
from tests.sessions.repair.examples import examples


def tool(parameters: dict[str, Any], name: str = "t") -> ToolSchema:
    return ToolSchema(function=FunctionSchema(name=name, description="d", parameters=parameters))


def obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


S = {"type": "string"}

DEEP = obj(
    {
        "path": S,
        "options": obj(
            {"mode": S, "limits": obj({"lines": {"type": "integer"}, "bytes": {"type": "integer"}}, ["lines"])}
        ),
        "target": obj({"file": S, "line": {"type": "integer"}}, ["file"]),
    },
    ["path", "target"],
)


def test_small_shallow_schema_is_left_alone() -> None:
    t = tool(obj({"path": S, "range": obj({"start": {"type": "integer"}})}, ["path"]))
    flat, fm = flatten_schema(t)
    assert fm is None
    assert flat is t


def test_wide_but_flat_schema_is_left_alone() -> None:
    t = tool(obj({f"p{i}": S for i in range(15)}))
    assert flatten_schema(t) == (t, None)


def test_deep_schema_becomes_dotted_names_with_required_carried() -> None:
    flat, fm = flatten_schema(tool(DEEP))
    assert fm is not None
    params = flat.function.parameters
    assert list(params["properties"]) == sorted(
        ["path", "options.mode", "options.limits.lines", "options.limits.bytes", "target.file", "target.line"]
    )
    # a leaf is required only when it and every object above it are required
    assert params["required"] == ["path", "target.file"]
    assert fm.by_name["options.limits.lines"] == ("options", "limits", "lines")
    assert "path" not in fm.by_name
    for prop in params["properties"].values():
        assert "properties" not in prop


def test_wide_nested_schema_is_flattened() -> None:
    t = tool(obj({"a": obj({f"x{i}": S for i in range(6)}), "b": obj({f"y{i}": S for i in range(6)})}))
    flat, fm = flatten_schema(t)
    assert fm is not None and len(flat.function.parameters["properties"]) == 12


def test_model_arguments_are_nested_back() -> None:
    _, fm = flatten_schema(tool(DEEP))
    args = {"path": "a.py", "target.file": "b.py", "options.limits.lines": 40, "options.mode": "fast"}
    assert unflatten_args(args, fm) == {
        "path": "a.py",
        "target": {"file": "b.py"},
        "options": {"limits": {"lines": 40}, "mode": "fast"},
    }


def test_nested_answer_to_a_flattened_schema_still_works() -> None:
    _, fm = flatten_schema(tool(DEEP))
    args: dict[str, Any] = {"target": {"file": "b.py"}, "target.line": 3}
    original = json.dumps(args)
    assert unflatten_args(args, fm) == {"target": {"file": "b.py", "line": 3}}
    assert json.dumps(args) == original  # the caller's dict is not written into


def test_pydantic_nested_models_with_refs_are_followed() -> None:
    class Limits(BaseModel):
        lines: int
        bytes: int | None = None

    class Options(BaseModel):
        mode: str
        limits: Limits

    class Args(BaseModel):
        path: str
        options: Options | None = None

    flat, fm = flatten_schema(tool(Args.model_json_schema()))
    assert fm is not None
    params = flat.function.parameters
    assert set(params["properties"]) == {"path", "options.mode", "options.limits.lines", "options.limits.bytes"}
    assert params["required"] == ["path"]  # options is optional, so nothing under it is required
    assert "$defs" not in params and "$ref" not in json.dumps(params)
    nested = unflatten_args({"path": "p", "options.mode": "m", "options.limits.lines": 3}, fm)
    assert Args.model_validate(nested).options == Options(mode="m", limits=Limits(lines=3))


def test_recursive_model_is_a_leaf_and_keeps_its_defs() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    class Args(BaseModel):
        a: dict[str, int] = {}
        deep: Node
        wrap: Wrap

    class Inner(BaseModel):
        x: int

    class Mid(BaseModel):
        inner: Inner

    class Wrap(BaseModel):
        mid: Mid

    Args.model_rebuild()
    flat, fm = flatten_schema(tool(Args.model_json_schema()))
    assert fm is not None
    params = flat.function.parameters
    assert "wrap.mid.inner.x" in params["properties"]
    assert "deep.children" in params["properties"]
    assert "$defs" in params  # deep.children still refers to Node


def test_collision_is_the_tool_authors_error() -> None:
    t = tool(obj({"a.b": S, "a": obj({"b": obj({"c": S})}), "x": obj({"b": S})}))
    t2 = tool(obj({"a.b.c": S, "a": obj({"b": obj({"c": S})})}))
    flatten_schema(t)  # "a.b" vs "a.b.c": distinct names, fine
    with pytest.raises(ToolSchemaError, match="rename"):
        flatten_schema(t2)


def test_output_is_canonical_whatever_the_key_order() -> None:
    def shuffled(node: Any, rnd: random.Random) -> Any:
        if isinstance(node, dict):
            items = list(node.items())
            rnd.shuffle(items)
            return {k: shuffled(v, rnd) for k, v in items}
        if isinstance(node, list):
            return [shuffled(v, rnd) for v in node]
        return node

    first, _ = flatten_schema(tool(DEEP))
    for seed in range(5):
        again, _ = flatten_schema(tool(shuffled(DEEP, random.Random(seed))))
        assert json.dumps(again.function.parameters) == json.dumps(first.function.parameters)
        assert encode_tools([again]) == encode_tools([first])


# ------------------------------------------------------------------------------------------------- hypothesis

names = st.text(alphabet="abcxyz_", min_size=1, max_size=4)
leaf_schemas: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{"type": "string"}, {"type": "integer"}, {"type": "array", "items": {"type": "string"}}]
)


def objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(names, children, min_size=1, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)), unique=True).map(lambda req: obj(props, req))
    )


schemas = objects(st.recursive(leaf_schemas, objects, max_leaves=20))


@st.composite
def args_for(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in schema["properties"].items():
        if not draw(st.booleans()):
            continue
        if "properties" in sub:
            nested = draw(args_for(sub))
            if nested:
                out[key] = nested
        else:
            out[key] = draw(st.integers() | st.text(max_size=5) | st.lists(st.text(max_size=3), max_size=2))
    return out


def leaf_paths(schema: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for key, sub in schema["properties"].items():
        out.extend(leaf_paths(sub, (*path, key)) if "properties" in sub else [(*path, key)])
    return out


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), schema=schemas)
def test_unflatten_of_flattened_args_round_trips(data: st.DataObject, schema: dict[str, Any]) -> None:
    flat, fm = flatten_schema(tool(schema))
    paths = leaf_paths(schema)
    needed = len(paths) > 10 or any(len(p) > 2 for p in paths)
    assert (fm is not None) == (needed and any(len(p) > 1 for p in paths))
    if fm is None:
        return
    props = flat.function.parameters["properties"]
    assert sorted(props) == sorted(".".join(p) for p in paths)
    assert all("properties" not in v for v in props.values())
    nested = data.draw(args_for(schema))
    dotted = flatten_args(nested, fm)
    assert set(dotted) <= set(props)
    assert unflatten_args(dotted, fm) == nested
    assert flatten_schema(tool(schema))[0] == flat  # deterministic


def test_flatmap_is_a_plain_value() -> None:
    fm = FlatMap((("a.b", ("a", "b")),))
    assert fm == FlatMap((("a.b", ("a", "b")),))
    assert unflatten_args({"a.b": 1, "c": 2}, fm) == {"a": {"b": 1}, "c": 2}
    assert unflatten_args({"a.b": 1}, None) == {"a.b": 1}
