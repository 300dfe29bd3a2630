"""Truncated and malformed argument strings: repaired into a dict, or a clean error for the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.repair import ModelArgumentsError, parse_arguments

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def test_valid_arguments_are_not_repaired() -> None:
    parsed = parse_arguments('{"path": "src/app.py", "start": 10}')
    assert parsed.args == {"path": "src/app.py", "start": 10}
    assert parsed.repaired is False


def test_empty_arguments_mean_no_parameters() -> None:
    assert parse_arguments("").args == {}
    assert parse_arguments("  ").repaired is False


def test_write_file_cut_off_at_length_is_closed() -> None:
    # What DeepSeek sends when max_tokens hits inside a write_file call: the content string never closes.
    raw = '{"path": "src/calc.py", "content": "def add(a, b):\\n    return a +'
    parsed = parse_arguments(raw, truncated=True)
    assert parsed.repaired is True
    assert parsed.args == {"path": "src/calc.py", "content": "def add(a, b):\n    return a +"}


def test_nested_arrays_cut_off_are_closed() -> None:
    raw = '{"edits": [{"old": "x = 1", "new": "x = 2"}, {"old": "y'
    parsed = parse_arguments(raw, truncated=True)
    assert parsed.args == {"edits": [{"old": "x = 1", "new": "x = 2"}, {"old": "y"}]}


def test_trailing_comma_is_repaired() -> None:
    assert parse_arguments('{"pattern": "TODO",}').args == {"pattern": "TODO"}


@pytest.mark.parametrize("raw", ["[1, 2]", '"src/app.py"', "42", "null", "true"])
def test_json_that_is_not_an_object_is_an_error(raw: str) -> None:
    with pytest.raises(ModelArgumentsError, match="one JSON object"):
        parse_arguments(raw)


def test_prose_is_an_error_that_tells_the_model_what_to_do() -> None:
    with pytest.raises(ModelArgumentsError) as info:
        parse_arguments("read the file src/app.py please", truncated=True)
    message = str(info.value)
    assert "not valid JSON" in message
    assert "finish_reason=length" in message


def test_absurd_nesting_is_a_clean_error() -> None:
    with pytest.raises(ModelArgumentsError):
        parse_arguments("[" * 100_000)
    with pytest.raises(ModelArgumentsError):
        parse_arguments('{"a": ' + "[" * 100_000)


@settings(max_examples=300, deadline=None)
@given(obj=json_objects, cut=st.integers(min_value=0), indent=st.sampled_from([None, 2]))
def test_any_prefix_of_an_object_repairs_to_a_dict_or_a_clean_error(
    obj: dict[str, Any], cut: int, indent: int | None
) -> None:
    full = json.dumps(obj, ensure_ascii=False, indent=indent)
    prefix = full[: cut % (len(full) + 1)]
    try:
        parsed = parse_arguments(prefix, truncated=True)
    except ModelArgumentsError as exc:
        assert str(exc)
        return
    assert isinstance(parsed.args, dict)
    if prefix == full:
        assert parsed.args == obj
        assert parsed.repaired is False


@pytest.mark.parametrize("raw", ["\ud800", '{"a": "\ud800', '{"a": "\ud800"', '{"a": "\ud800"}'])
def test_lone_surrogates_do_not_escape_as_other_errors(raw: str) -> None:
    try:
        parsed = parse_arguments(raw, truncated=True)
    except ModelArgumentsError:
        return
    assert isinstance(parsed.args, dict)


@settings(max_examples=300, deadline=None)
@given(raw=st.text(st.characters(codec=None, exclude_categories=())))
def test_arbitrary_text_never_raises_anything_else(raw: str) -> None:
    try:
        parsed = parse_arguments(raw)
    except ModelArgumentsError:
        return
    assert isinstance(parsed.args, dict)


def test_a_megabyte_write_file_cut_off_keeps_every_character_it_had() -> None:
    source = Path(__file__).read_text() * 200
    raw = json.dumps({"path": "big.py", "content": source})[:1_000_000]
    parsed = parse_arguments(raw, truncated=True)
    assert parsed.repaired is True
    assert parsed.args["path"] == "big.py"
    assert source.startswith(parsed.args["content"])
    assert len(parsed.args["content"]) > 900_000


def test_an_unfinished_parameter_goes_missing_rather_than_invented() -> None:
    assert parse_arguments('{"path": "a.py", "start_line": 1', truncated=True).args == {"path": "a.py", "start_line": 1}
    assert parse_arguments('{"path": "a.py", "recursive": tr', truncated=True).args == {"path": "a.py"}
    assert parse_arguments('{"path": "a.py", "limi', truncated=True).args == {"path": "a.py"}


def test_two_objects_glued_together_are_not_silently_cut() -> None:
    with pytest.raises(ModelArgumentsError):
        parse_arguments('{"path": "a.py"}{"path": "b.py"}')


def test_a_huge_malformed_string_is_an_error_not_a_stall() -> None:
    raw = "{'path': 'a.py', 'content': '" + "x, y = {1: 2}\n" * 10_000 + "'}"
    with pytest.raises(ModelArgumentsError, match="too large to repair"):
        parse_arguments(raw)
