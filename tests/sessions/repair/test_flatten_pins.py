"""Pins for flattening (bench/mutation_score.py, group repair-calls): which schemas the model sees with dotted names,
which parameters it is told are required, and how its dotted arguments are nested back before the tool runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from sessions.repair import FlatMap, ToolSchemaError, flatten_args, flatten_schema, unflatten_args
from sessions.wire.messages import FunctionSchema, ToolSchema

S = {"type": "string"}
N = {"type": "integer"}


def tool(parameters: dict[str, Any], *, strict: bool = False) -> ToolSchema:
    return ToolSchema(function=FunctionSchema(name="t", description="d", parameters=parameters, strict=strict))


def obj(props: dict[str, Any], required: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, **extra}
    if required is not None:
        out["required"] = required
    return out


def deep(child: dict[str, Any], **top: Any) -> dict[str, Any]:
    """``child`` as ``a.b.c``, three levels down, so that the tool must be flattened (every object on the way and
    ``p`` beside it required)."""
    return obj({"a": obj({"b": obj({"c": child}, ["c"])}, ["b"]), "p": S}, ["a", "p"], **top)


def seen(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the model sees the tool."""
    flat, fm = flatten_schema(tool(parameters))
    assert fm is not None
    return flat.function.parameters


def shape(parameters: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the dotted parameters the model sees, the required ones)."""
    params = seen(parameters)
    return sorted(params["properties"]), params.get("required", [])


# ------------------------------------------------------------------------------------------------ references


def test_both_local_reference_forms_are_followed_and_dropped_once_nothing_refers_to_them() -> None:
    inner = obj({"x": N, "y": S}, ["x"])
    for key in ("$defs", "definitions"):
        params = seen(deep({"$ref": f"#/{key}/Inner"}, **{key: {"Inner": inner}}))
        assert sorted(params["properties"]) == ["a.b.c.x", "a.b.c.y", "p"]
        assert params["required"] == ["a.b.c.x", "p"]
        assert key not in params


def test_a_reference_may_carry_a_title_and_a_description() -> None:
    ref = {"$ref": "#/$defs/Inner", "title": "B", "description": "the b"}
    assert shape(deep(ref, **{"$defs": {"Inner": obj({"x": N}, ["x"])}})) == (["a.b.c.x", "p"], ["a.b.c.x", "p"])


def test_a_reference_with_other_keys_a_remote_one_or_a_missing_one_is_a_leaf_kept_as_written() -> None:
    defs = {"Inner": obj({"x": N})}
    for ref in (
        {"$ref": "#/$defs/Inner", "type": "object"},
        {"$ref": "other.json#/Inner"},
        {"$ref": "#/$defs/Missing"},
        {"$ref": 3},
    ):
        params = seen(deep(ref, **{"$defs": defs}))
        assert sorted(params["properties"]) == ["a.b.c", "p"]
        assert params["properties"]["a.b.c"] == ref
        assert params["required"] == ["a.b.c", "p"]


def test_a_leaf_that_still_refers_keeps_both_kinds_of_definitions() -> None:
    defs = {"Node": obj({"name": S, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}})}
    params = seen(deep({"$ref": "#/$defs/Node"}, **{"$defs": defs, "definitions": {"Old": S}}))
    assert sorted(params["properties"]) == ["a.b.c.kids", "a.b.c.name", "p"]
    assert params["$defs"] == defs
    assert params["definitions"] == {"Old": S}


def _chain(hops: int) -> dict[str, Any]:
    """``a.b`` reaches an object through ``hops`` references, one definition referring to the next."""
    defs: dict[str, Any] = {f"D{i}": {"$ref": f"#/$defs/D{i + 1}"} for i in range(hops - 1)}
    defs[f"D{hops - 1}"] = obj({"x": N})
    return deep({"$ref": "#/$defs/D0"}, **{"$defs": defs})


def test_a_chain_of_64_references_is_followed_a_longer_one_is_a_leaf() -> None:
    assert shape(_chain(64))[0] == ["a.b.c.x", "p"]
    assert shape(_chain(65))[0] == ["a.b.c", "p"]


def test_all_of_one_schema_is_that_schema_and_may_carry_a_default() -> None:
    inner = obj({"x": N, "y": S}, ["x"])
    wrapped = {"allOf": [inner], "description": "b", "title": "B", "default": {}}
    assert shape(deep(wrapped)) == (["a.b.c.x", "a.b.c.y", "p"], ["a.b.c.x", "p"])


def test_all_of_one_reference_is_the_referenced_schema() -> None:
    wrapped = {"allOf": [{"$ref": "#/definitions/Inner"}], "description": "b"}
    params = seen(deep(wrapped, definitions={"Inner": obj({"x": N}, ["x"])}))
    assert sorted(params["properties"]) == ["a.b.c.x", "p"]
    assert params["required"] == ["a.b.c.x", "p"]


def test_all_of_several_schemas_or_with_other_keys_is_a_leaf() -> None:
    inner = obj({"x": N})
    for wrapped in ({"allOf": [inner, inner]}, {"allOf": [inner], "type": "object"}, {"allOf": inner}):
        assert shape(deep(wrapped)) == (["a.b.c", "p"], ["a.b.c", "p"])


def test_an_object_or_null_is_an_optional_object_whatever_the_order() -> None:
    inner = obj({"x": N}, ["x"])
    for any_of in ([inner, {"type": "null"}], [{"type": "null"}, inner]):
        wrapped = {"anyOf": any_of, "default": None, "title": "B", "description": "b"}
        assert shape(deep(wrapped)) == (["a.b.c.x", "p"], ["p"])


def test_an_optional_reference_is_followed() -> None:
    wrapped = {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]}
    params = seen(deep(wrapped, **{"$defs": {"Inner": obj({"x": N}, ["x"])}}))
    assert sorted(params["properties"]) == ["a.b.c.x", "p"]
    assert params["required"] == ["p"]


def test_an_optional_recursive_model_is_unrolled_once_then_a_leaf() -> None:
    class Node(BaseModel):
        name: str
        next: Node | None = None

    node = Node.model_json_schema()["$defs"]["Node"]
    params = seen(deep({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}, **{"$defs": {"Node": node}}))
    assert sorted(params["properties"]) == ["a.b.c.name", "a.b.c.next", "p"]
    assert params["required"] == ["p"]
    assert params["properties"]["a.b.c.next"]["anyOf"][0] == {"$ref": "#/$defs/Node"}
    assert params["$defs"] == {"Node": node}


def test_any_of_that_is_not_one_object_or_null_is_a_leaf() -> None:
    inner = obj({"x": N})
    for wrapped in (
        {"anyOf": [S, {"type": "null"}]},
        {"anyOf": [inner, N]},
        {"anyOf": [inner, {"type": "null"}, S]},
        {"anyOf": [inner]},
        {"anyOf": [inner, {"type": "null"}], "type": "object"},
        {"anyOf": [inner, "null"]},
    ):
        assert shape(deep(wrapped)) == (["a.b.c", "p"], ["a.b.c", "p"])


# --------------------------------------------------------------------------------------------------- objects


def test_an_object_without_a_type_is_flattened_one_of_another_type_is_a_leaf() -> None:
    untyped = {"properties": {"x": N}, "required": ["x"]}
    assert shape(deep(untyped)) == (["a.b.c.x", "p"], ["a.b.c.x", "p"])
    assert shape(deep({**untyped, "type": "array"})) == (["a.b.c", "p"], ["a.b.c", "p"])


def test_a_free_form_map_or_an_empty_object_is_a_leaf_a_closed_object_is_flattened() -> None:
    for leaf in (obj({"x": N}, additionalProperties=True), obj({"x": N}, additionalProperties=S), obj({})):
        assert shape(deep(leaf)) == (["a.b.c", "p"], ["a.b.c", "p"])
    assert shape(deep(obj({"x": N}, ["x"], additionalProperties=False))) == (["a.b.c.x", "p"], ["a.b.c.x", "p"])


def test_required_names_that_are_not_strings_or_not_a_list_are_ignored() -> None:
    assert shape(deep(obj({"x": N, "y": N}, [3, "y"]))) == (["a.b.c.x", "a.b.c.y", "p"], ["a.b.c.y", "p"])
    assert shape(deep({"type": "object", "properties": {"x": N}, "required": "x"})) == (["a.b.c.x", "p"], ["p"])


def test_a_leaf_keeps_its_schema_and_a_schema_that_is_not_an_object_becomes_empty() -> None:
    params = seen(deep(obj({"x": {"type": "integer", "minimum": 1}, "y": True})))
    assert params["properties"]["a.b.c.x"] == {"type": "integer", "minimum": 1}
    assert params["properties"]["a.b.c.y"] == {}


def test_a_schema_that_is_no_object_with_properties_is_left_alone() -> None:
    for parameters in ({"type": "object"}, {"type": "object", "properties": {}}, {"type": "string"}):
        t = tool(parameters)
        assert flatten_schema(t) == (t, None)


# ------------------------------------------------------------------------------------------------- thresholds


def _nested(leaves: int) -> dict[str, Any]:
    return obj({"o": obj({f"k{i:02d}": S for i in range(leaves)})})


def test_ten_leaves_two_levels_down_are_left_alone_eleven_are_flattened() -> None:
    t = tool(_nested(10))
    assert flatten_schema(t) == (t, None)
    assert len(shape(_nested(11))[0]) == 11


def test_two_levels_are_left_alone_three_are_flattened() -> None:
    t = tool(obj({"a": obj({"b": S})}))
    assert flatten_schema(t) == (t, None)
    assert shape(obj({"a": obj({"b": obj({"c": S})})}))[0] == ["a.b.c"]


def test_a_wide_tool_with_one_nested_leaf_is_flattened() -> None:
    wide = [f"p{i}" for i in range(10)]
    assert shape(obj({**dict.fromkeys(wide, S), "o": obj({"x": S})}))[0] == ["o.x", *wide]


# --------------------------------------------------------------------------------------------------- output


def test_the_flattened_tool_keeps_its_name_description_strictness_and_other_keywords() -> None:
    parameters = deep(obj({"x": N}), title="Args", description="all", additionalProperties=False)
    del parameters["type"]
    flat, fm = flatten_schema(tool(parameters, strict=True))
    assert fm is not None
    assert (flat.function.name, flat.function.description, flat.function.strict) == ("t", "d", True)
    params = flat.function.parameters
    assert {k: v for k, v in params.items() if k != "properties"} == {
        "type": "object",
        "title": "Args",
        "description": "all",
        "additionalProperties": False,
        "required": ["p"],
    }
    assert list(params) == sorted(params)


def test_no_required_list_when_nothing_is_required() -> None:
    params = seen(obj({"a": obj({"b": obj({"c": S})})}))
    assert "required" not in params


def test_a_required_object_with_no_required_leaf_leaves_nothing_required() -> None:
    params = seen(obj({"a": obj({"b": obj({"c": S})})}, ["a"]))
    assert "required" not in params


def test_the_flattened_schema_shares_nothing_with_the_tools_own() -> None:
    leaf = {"type": "array", "items": {"type": "string"}}
    parameters = deep(obj({"x": leaf}), examples=[{"p": "q"}])
    parameters["$defs"] = {"Unused": S}
    params = seen(parameters)
    params["properties"]["a.b.c.x"]["items"]["type"] = "integer"
    params["examples"][0]["p"] = "changed"
    assert leaf == {"type": "array", "items": {"type": "string"}}
    assert parameters["examples"] == [{"p": "q"}]
    assert "$defs" not in params


def test_only_nested_leaves_are_mapped_back_sorted_by_dotted_name() -> None:
    _, fm = flatten_schema(tool(obj({"z": S, "m": obj({"y": obj({"b": S, "a": S})}), "b": obj({"q": S})})))
    assert fm == FlatMap((("b.q", ("b", "q")), ("m.y.a", ("m", "y", "a")), ("m.y.b", ("m", "y", "b"))))


def test_the_collision_message_names_the_tool_and_the_name() -> None:
    with pytest.raises(ToolSchemaError) as caught:
        flatten_schema(tool(obj({"a.b.c": S, "a": obj({"b": obj({"c": S})})})))
    assert str(caught.value) == (
        "Tool 't': the flattened parameter name 'a.b.c' is used twice (a parameter name contains '.'); "
        "rename the parameter so that dotted paths stay unique."
    )


# ------------------------------------------------------------------------------------------------ arguments


FM = FlatMap((("a.b.x", ("a", "b", "x")), ("a.b.y", ("a", "b", "y")), ("a.c", ("a", "c"))))


def test_a_dotted_leaf_replaces_a_value_in_its_way() -> None:
    assert unflatten_args({"a": "oops", "a.b.x": 1}, FM) == {"a": {"b": {"x": 1}}}
    assert unflatten_args({"a": {"b": 2}, "a.b.x": 1}, FM) == {"a": {"b": {"x": 1}}}


def test_a_dotted_leaf_wins_over_a_nested_one_in_either_order() -> None:
    assert unflatten_args({"a.b.x": 1, "a": {"b": {"x": 2, "y": 3}, "c": 4}}, FM) == {
        "a": {"b": {"x": 1, "y": 3}, "c": 4}
    }
    assert unflatten_args({"a": {"b": {"x": 2}}, "a.b.x": 1}, FM) == {"a": {"b": {"x": 1}}}


def test_a_nested_answer_is_copied_not_shared() -> None:
    given: dict[str, Any] = {"a": {"b": {"x": 2}}}
    out = unflatten_args({**given, "a.c": 1}, FM)
    assert out == {"a": {"b": {"x": 2}, "c": 1}}
    assert given == {"a": {"b": {"x": 2}}}
    deeper: dict[str, Any] = {"b": {"x": 2}}
    assert unflatten_args({"a": deeper, "a.b.y": 3}, FM) == {"a": {"b": {"x": 2, "y": 3}}}
    assert deeper == {"b": {"x": 2}}
    plain = {"k": [1]}
    assert unflatten_args(plain, None) == plain
    assert unflatten_args(plain, None) is not plain


def test_unknown_names_pass_through_and_a_dotted_leaf_wins_over_a_value_in_its_place() -> None:
    assert unflatten_args({"q": 1, "a.z": 2}, FM) == {"q": 1, "a.z": 2}
    assert unflatten_args({"a": 1, "a.c": 2}, FM) == {"a": {"c": 2}}
    assert unflatten_args({"a.c": 2, "a": 1}, FM) == {"a": {"c": 2}}


def test_a_nested_answer_merged_under_a_dotted_leaf_is_copied_too() -> None:
    inner = {"x": 2}
    out = unflatten_args({"a.c": 1, "a": {"b": inner}, "a.b.y": 3}, FM)
    assert out == {"a": {"b": {"x": 2, "y": 3}, "c": 1}}
    assert inner == {"x": 2}


def test_flatten_args_dots_every_nested_leaf_it_knows_and_keeps_what_it_does_not() -> None:
    assert flatten_args({"a": {"b": {"x": 1, "z": 2}, "c": 3}, "q": 4}, FM) == {
        "a.b.x": 1,
        "a.b.z": 2,
        "a.c": 3,
        "q": 4,
    }
    assert flatten_args({"a": {"b": 5}}, FM) == {"a.b": 5}
    assert flatten_args({"a": {"b": {"x": {"deeper": 1}}}}, FM) == {"a.b.x": {"deeper": 1}}
