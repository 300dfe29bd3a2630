"""Pins for scavenging (bench/mutation_score.py, group repair-calls): which call each shape of markup the model
leaked is read as, with which id, and which markup is no call at all."""

from __future__ import annotations

from typing import Any

from sessions.repair import ScavengedCall, scavenge_calls
from sessions.repair.scavenge import find_calls

KNOWN = ("read_file", "write_file", "bash", "list_dir")
B, S, E = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
TC = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'


def calls(content: str | None = None, reasoning: str | None = None) -> tuple[ScavengedCall, ...]:
    return scavenge_calls(content=content, reasoning=reasoning, known_tools=KNOWN)


def found(text: str) -> list[tuple[str, dict[str, Any], bool, str]]:
    """(name, arguments, repaired, shape) of every call in ``text``."""
    return [(f.name, f.args, f.repaired, f.shape) for f in find_calls(text, KNOWN)]


LS = ("bash", {"command": "ls"}, False)


# ------------------------------------------------------------------------------------------------------ ids


def test_a_scavenged_call_carries_every_field_and_a_stable_id() -> None:
    text = (
        '<｜DSML｜invoke name="read_fileread_file">'
        '<｜DSML｜parameter name="path" string="true">ä.py</｜DSML｜parameter></｜DSML｜invoke>'
    )
    assert calls(reasoning=text) == (
        ScavengedCall(
            id="scv_4cecd0d0413c223149c0241a",
            name="read_file",
            args={"path": "ä.py"},
            repaired=False,
            source="reasoning",
            shape="dsml",
            written_name="read_fileread_file",
            bodies=("path",),
        ),
    )


def test_the_id_depends_on_the_position_the_name_and_the_arguments_in_any_key_order() -> None:
    one = calls('<tool_call>{"name": "bash", "arguments": {"a": 1, "b": {"c": "é", "d": 2}}}</tool_call>')
    same = calls('<tool_call>{"name": "bash", "arguments": {"b": {"d": 2, "c": "é"}, "a": 1}}</tool_call>')
    assert one[0].id == same[0].id == "scv_8516f1705c3d368bb84d0cd4"
    second = calls(TC + '<tool_call>{"name": "bash", "arguments": {"a": 1, "b": {"c": "é", "d": 2}}}</tool_call>')
    assert second[1].id != one[0].id
    assert calls(TC.replace("bash", "list_dir"))[0].id != calls(TC)[0].id


def test_a_lone_surrogate_in_the_arguments_still_gets_an_id() -> None:
    (call,) = calls('<tool_call>{"name": "bash", "arguments": {"command": "\\ud800"}}</tool_call>')
    assert call.args == {"command": "\ud800"}
    assert len(call.id) == 28 and call.id.startswith("scv_")


def test_the_same_call_in_another_key_order_counts_once() -> None:
    text = (
        '<tool_call>{"name": "bash", "arguments": {"a": 1, "b": 2}}</tool_call>'
        '<tool_call>{"name": "bash", "arguments": {"b": 2, "a": 1}}</tool_call>'
    )
    assert found(text) == [("bash", {"a": 1, "b": 2}, False, "tool_call_tag")]


# --------------------------------------------------------------------------------------------------- sources


def test_reasoning_is_searched_when_content_is_empty_or_has_no_call() -> None:
    for content in (None, "", "no call here"):
        assert [(c.name, c.source) for c in calls(content, TC)] == [("bash", "reasoning")]
    assert [(c.name, c.source) for c in calls(TC, None)] == [("bash", "content")]
    assert calls("", "") == () and calls(None, None) == ()


# ---------------------------------------------------------------------------------------------- special tokens


def test_special_tokens_with_more_than_one_separator_are_no_call_and_do_not_hide_the_next() -> None:
    text = f'{B}bash{S}x{S}{{"command": "pwd"}}{E}{B}bash{S}{{"command": "ls"}}{E}'
    assert found(text) == [(*LS, "special_tokens")]


def test_a_complete_special_token_call_stands_before_a_later_call() -> None:
    text = f'{B}list_dir{S}{{"path": "."}}{E} then {TC}'
    assert found(text) == [("list_dir", {"path": "."}, False, "special_tokens"), (*LS, "tool_call_tag")]


def test_a_fenced_body_inside_special_tokens_is_that_call_once_and_a_later_call_still_counts() -> None:
    text = f'{B}function{S}list_dir\n```json\n{{"path": "."}}\n```{E} then {TC}'
    assert found(text) == [("list_dir", {"path": "."}, False, "special_tokens"), (*LS, "tool_call_tag")]


def test_a_call_fenced_inside_markup_is_no_call_of_its_own_and_a_later_call_still_counts() -> None:
    inner = '{"name": "bash", "arguments": {"command": "ls"}}'
    text = f'<invoke name="bash">\n```json\n{inner}\n```\n</invoke> then ' + TC.replace("ls", "pwd")
    assert found(text) == [
        ("bash", {"name": "bash", "arguments": {"command": "ls"}}, False, "dsml"),
        ("bash", {"command": "pwd"}, False, "tool_call_tag"),
    ]


def test_three_tags_in_a_row_are_three_calls() -> None:
    text = "".join(TC.replace('"ls"', f'"ls {i}"') for i in range(3))
    assert [f.args["command"] for f in find_calls(text, KNOWN)] == ["ls 0", "ls 1", "ls 2"]


def test_special_tokens_cut_off_after_a_complete_call_are_the_second_call() -> None:
    text = f'{B}bash{S}{{"command": "ls"}}{E}{B}list_dir{S}{{"path": "sr'
    assert found(text) == [(*LS, "special_tokens"), ("list_dir", {"path": "sr"}, True, "special_tokens")]


def test_a_special_token_name_is_trimmed_and_a_body_that_is_no_object_is_no_call() -> None:
    assert found(f'{B} bash \n{{"command": "ls"}}{E}') == [(*LS, "special_tokens")]
    assert found(f"{B}bash{S}ls -la{E}") == []


# ---------------------------------------------------------------------------------------------------- dsml


def test_dsml_values_are_json_unless_marked_as_strings_or_not_json() -> None:
    text = (
        '<invoke name=" bash ">'
        '<parameter name="n" string="true">10</parameter>'
        '<parameter name="m" string="false">[1, 2]</parameter>'
        '<parameter name="k">{"x": null}</parameter>'
        '<parameter name="t" string="false">not json</parameter>'
        '<parameter name="r">' + "[" * 100_000 + "</parameter>"
        "</invoke>"
    )
    (call,) = find_calls(text, KNOWN)
    assert (call.name, call.shape, call.repaired, call.bodies) == ("bash", "dsml", False, ("n",))
    assert call.args == {"n": "10", "m": [1, 2], "k": {"x": None}, "t": "not json", "r": "[" * 100_000}


def test_an_empty_invoke_is_a_call_without_arguments_and_a_fenced_json_body_is_read() -> None:
    text = '<invoke name="list_dir">\n</invoke><invoke name="bash">```json\n{"command": "ls",}\n```</invoke>'
    assert found(text) == [("list_dir", {}, False, "dsml"), ("bash", {"command": "ls"}, True, "dsml")]


def test_an_invoke_whose_body_is_no_object_is_no_call_and_does_not_hide_the_next() -> None:
    text = '<invoke name="bash">ls</invoke><invoke name="bash">{"command": "ls"}</invoke>'
    assert found(text) == [(*LS, "dsml")]


# --------------------------------------------------------------------------------------------------- tags


def test_a_tool_call_tag_that_is_no_call_does_not_hide_the_next() -> None:
    text = "<tool_call>not json</tool_call>" + '<tool_call>{"tool": "bash"}</tool_call>' + TC
    assert found(text) == [(*LS, "tool_call_tag")]


def test_loose_json_in_a_tool_call_tag_or_its_arguments_string_is_marked_repaired() -> None:
    loose = "<tool_call>{'name': 'bash', 'arguments': {'command': 'ls'}}</tool_call>"
    as_string = """<tool_call>{"name": "bash", "arguments": "{'command': 'ls'}"}</tool_call>"""
    assert found(loose) == [("bash", {"command": "ls"}, True, "tool_call_tag")]
    assert found(as_string) == [("bash", {"command": "ls"}, True, "tool_call_tag")]


def test_an_unclosed_tag_is_no_call_of_its_shape_only_special_tokens_run_to_the_end() -> None:
    assert found('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}') == [(*LS, "prose_json")]
    assert found('<function=bash>{"command": "ls"}') == []
    assert found('<invoke name="bash">{"command": "ls"}') == []


def test_a_tag_left_open_before_the_next_is_skipped_and_the_next_is_read() -> None:
    text = '<function=bash>{"command": "pwd"}<function=bash>{"command": "ls"}</function>'
    assert found(text) == [(*LS, "function_tag")]


def test_function_tags_empty_fenced_or_not_an_object() -> None:
    text = (
        "<function=list_dir></function>"
        "<function=bash>ls</function>"
        '<function=read_file>\n```\n{"path": "a"}\n```\n</function>'
    )
    assert found(text) == [("list_dir", {}, False, "function_tag"), ("read_file", {"path": "a"}, False, "function_tag")]


def test_function_parameters_lose_one_newline_at_each_end_only() -> None:
    text = "<function=write_file><parameter=path>a.py</parameter><parameter=content>\n\nx\n\n</parameter></function>"
    assert found(text) == [("write_file", {"path": "a.py", "content": "\nx\n"}, False, "function_tag")]


# ---------------------------------------------------------------------------------------------------- json


def test_a_whole_text_call_with_a_trailing_newline_is_the_bare_shape() -> None:
    assert found('{"name": "bash", "arguments": {"command": "ls"}}\n') == [(*LS, "bare_json")]


def test_two_fenced_calls_and_two_prose_calls_are_all_read_in_order() -> None:
    fenced = (
        '```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```\n'
        '```\n{"name": "list_dir", "arguments": {}}\n```'
    )
    assert found(fenced) == [(*LS, "fenced_json"), ("list_dir", {}, False, "fenced_json")]
    prose = (
        'I run {"name": "bash", "arguments": {"command": "ls"}} and later {"name": "list_dir", "arguments": {}} here'
    )
    assert found(prose) == [(*LS, "prose_json"), ("list_dir", {}, False, "prose_json")]
    assert [(f.start, f.end) for f in find_calls(prose, KNOWN)] == [(6, 54), (65, 102)]
