"""Pins for the tool-call objects read from text (json_calls; bench/mutation_score.py, group repair-calls): which
object is a call, where in a text one is taken, and where the model only talks about one."""

from __future__ import annotations

from typing import Any

from sessions.repair.json_calls import MAX_LENIENT_PARSES, call_shaped, fenced_json, parse_object, prose_json
from sessions.repair.truncation import MAX_REPAIR_CHARS

LS = '{"name": "bash", "arguments": {"command": "ls"}}'
DIR = '{"name": "list_dir", "arguments": {"path": "."}}'


def prose(text: str) -> list[tuple[str, dict[str, Any], bool]]:
    return [(c.name, c.args, c.repaired) for c in prose_json(text)]


def fenced(text: str) -> list[tuple[str, dict[str, Any], bool]]:
    found = list(fenced_json(text))
    assert {c.shape for c in found} <= {"fenced_json", "bare_json"}
    return [(c.name, c.args, c.repaired) for c in found]


BASH = ("bash", {"command": "ls"}, False)
LIST = ("list_dir", {"path": "."}, False)


# ------------------------------------------------------------------------------------------------ call shapes


def test_the_r1_variant_is_a_call_only_with_its_own_arguments_key() -> None:
    assert call_shaped({"tool_name": "read_file", "tool_args": {"path": "a"}}) == ("read_file", {"path": "a"}, False)
    assert call_shaped({"tool_name": "read_file", "arguments": {"path": "a"}}) is None


def test_the_envelope_is_opened_only_when_the_object_names_no_tool_itself() -> None:
    inner = {"name": "bash", "arguments": {"command": "ls"}}
    assert call_shaped({"type": "function", "function": inner}) == ("bash", {"command": "ls"}, False)
    assert call_shaped({"name": "read_file", "arguments": {}, "function": inner}) == ("read_file", {}, False)
    r1 = {"tool_name": "read_file", "tool_args": {}, "function": inner}
    assert call_shaped(r1) == ("read_file", {}, False)
    assert call_shaped({"function": "bash", "arguments": {}}) is None


def test_arguments_win_over_parameters_and_the_name_is_trimmed() -> None:
    both = {"name": " bash\n", "arguments": {"command": "ls"}, "parameters": {"command": "rm"}}
    assert call_shaped(both) == BASH
    assert call_shaped({"name": "bash", "parameters": {"command": "ls"}}) == BASH
    assert call_shaped({"tool_name": " bash ", "tool_args": {"command": "ls"}}) == BASH


def test_arguments_as_a_string_empty_loose_or_not_an_object() -> None:
    assert call_shaped({"name": "bash", "arguments": "  "}) == ("bash", {}, False)
    assert call_shaped({"name": "bash", "arguments": "{'command': 'ls'}"}) == ("bash", {"command": "ls"}, True)
    assert call_shaped({"name": "bash", "arguments": '{"command": "ls"}'}) == BASH
    for raw in ("ls", "[1]", ["ls"], 3, None):
        assert call_shaped({"name": "bash", "arguments": raw}) is None, raw
    assert call_shaped({"name": "bash"}) is None
    assert call_shaped({"name": 3, "arguments": {}}) is None


def test_parse_object_reads_only_objects() -> None:
    assert parse_object(' {"a": 1} ') == ({"a": 1}, False)
    assert parse_object("{'a': 1,}") == ({"a": 1}, True)
    assert parse_object("[1]") is None
    assert parse_object("") is None


# ----------------------------------------------------------------------------------------------------- fenced


def test_a_whole_text_call_is_one_call_whatever_its_arguments_hold() -> None:
    text = '{"name": "write_file", "arguments": {"content": "```{\'name\': \'bash\', \'arguments\': {}}```"}}'
    assert [(c.name, c.start, c.end) for c in fenced_json(" " + text + "\n")] == [("write_file", 0, len(text) + 2)]


def test_a_whole_text_object_that_is_no_call_still_lets_its_fences_be_read() -> None:
    text = '{"note": "```json\n' + LS + '\n```"}'
    assert fenced(text) == [BASH]


def test_a_fenced_call_spans_its_fences() -> None:
    text = "see\n```json\n" + LS + "\n```\nand\n```\n" + DIR + "\n```"
    assert [(c.name, c.start, c.end) for c in fenced_json(text)] == [("bash", 4, 64), ("list_dir", 69, 125)]
    assert text[4:64].startswith("```") and text[4:64].endswith("```") and text[69:125].startswith("```")


def test_a_fence_whose_body_is_not_only_the_object_is_no_call() -> None:
    assert fenced("```json\n" + LS + "\nthen more\n```") == []
    assert fenced("```json\n" + LS.replace("}}", "},}") + "\nthen\n```") == []
    assert fenced("```json\nnote " + LS + "\n```") == []
    assert fenced("```json\n" + LS.replace("}}", "},}")) == []  # never closed


def test_loose_json_is_repaired_in_untagged_and_json_fences_only() -> None:
    loose = "{'name': 'bash', 'arguments': {'command': 'ls'}}"
    for tag in ("", "json", "JSON", "jsonc", "json5"):
        assert fenced(f"```{tag}\n{loose}\n```") == [("bash", {"command": "ls"}, True)], tag
    for tag in ("python", "js"):
        assert fenced(f"```{tag}\n{loose}\n```") == [], tag
    assert fenced("```\n" + LS + "\n```") == [BASH]
    assert fenced("```python\n" + LS + "\n```") == [BASH]  # strict JSON is a call in any fence


def test_a_text_that_only_starts_with_an_object_is_no_whole_text_call() -> None:
    assert fenced(LS + " and then") == []
    assert fenced("and then " + LS) == []


DEEP = "{'name': 'bash', 'arguments': " + "{'a': " * 1200 + "1" + "}" * 1201


def test_an_object_too_deep_to_repair_is_no_call_and_the_next_one_still_is() -> None:
    assert fenced(DEEP) == [] and fenced("```json\n" + DEEP + "\n```") == []
    assert prose("so " + DEEP + " then " + LS) == [BASH]


def test_loose_arguments_in_a_strict_fenced_call_are_marked_repaired() -> None:
    assert fenced('```\n{"name": "bash", "arguments": "{\'command\': \'ls\'}"}\n```') == [
        ("bash", {"command": "ls"}, True)
    ]


# ------------------------------------------------------------------------------------------------------ prose


def test_prose_calls_side_by_side_are_each_read() -> None:
    assert prose(f"run {LS}{DIR} now") == [BASH, LIST]
    assert [(c.start, c.end) for c in prose_json(f"run {LS}{DIR} now")] == [(4, 52), (52, 100)]


def test_an_object_right_after_markup_or_a_fence_is_prose() -> None:
    assert prose(f"```x``` {LS}") == [BASH]
    assert prose(f"```x```{LS}") == [BASH]
    assert prose(f"<tool_call>x</tool_call>{LS}") == [BASH]
    assert prose(f"```\n{LS}\n``` and <function=x>{DIR}</function>") == []
    assert prose(f"{LS} and then ```x``` <tool_call>y</tool_call>") == [BASH]


def test_a_call_inside_another_object_is_no_call_of_its_own() -> None:
    assert prose('here {"plan": ' + LS + "} ok") == []
    assert prose('here {"plan": 1, ' + "'x': " + LS + ",} then " + DIR) == [LIST]


def test_escapes_and_smart_quotes_in_loose_strings_are_read() -> None:
    assert prose("""so {'name': 'bash', 'arguments': {'command': "a \\" b"},} then""") == [
        ("bash", {"command": 'a " b'}, True)
    ]
    assert prose("so {“name”: “bash”, “arguments”: {“command”: “a{”}} then") == [("bash", {"command": "a{"}, True)]
    assert prose("""so {"": 1, 'name': 'bash', 'arguments': {'command': 'ls'},} then""") == [
        ("bash", {"command": "ls"}, True)
    ]


def test_loose_prose_calls_are_repaired_and_braces_in_strings_do_not_count() -> None:
    text = """so {'name': 'bash', 'arguments': {'command': "echo '}' \\"}\\" “}”"},} then"""
    assert prose(text) == [("bash", {"command": "echo '}' \"}\" “}”"}, True)]
    assert prose("so {“name”: “bash”, “arguments”: {“command”: “ls”}} then") == [("bash", {"command": "ls"}, True)]


def test_a_loose_object_with_no_call_key_or_never_closed_is_not_repaired() -> None:
    assert prose("so {'tool': 'bash', 'arguments': {'command': 'ls'},} then " + DIR) == [LIST]
    assert prose("so {'name': 'bash', 'arguments': {'command': 'ls'} then") == []
    assert prose("so {'name': 'bash', 'arguments': {'command': {'ls'} then " + DIR) == [LIST]


def test_at_most_64_loose_objects_are_repaired_per_text() -> None:
    junk = "{'name': 'x', 'v': 1,} "
    loose = "{'name': 'bash', 'arguments': {'command': 'ls'},}"
    assert MAX_LENIENT_PARSES == 64
    assert prose(junk * 63 + loose) == [("bash", {"command": "ls"}, True)]
    assert prose(junk * 64 + loose) == []
    assert prose(junk * 64 + LS) == [BASH]  # strict JSON costs no repair
    assert prose("{'v': 1,} " * 64 + loose) == [("bash", {"command": "ls"}, True)]  # no call key: no repair


def test_past_the_scan_budget_no_loose_object_is_looked_for_a_strict_one_still_is() -> None:
    # Every "{“" opens a smart-quoted string that never closes: each start scans to its limit, none is memoized.
    looping = "{“a " * 2_000
    assert prose(looping + "{'name': 'bash', 'arguments': {'command': 'ls'},}") == []
    assert prose(looping + LS) == [BASH]
    # Closed strings: the first scan answers for every brace after it, so the budget is not spent.
    assert prose("{“a” " * 2_000 + "{'name': 'bash', 'arguments': {'command': 'ls'},}") == [
        ("bash", {"command": "ls"}, True)
    ]
    # Scans that stop early spend the budget too: each "{“" here reads the rest of the text as one string and
    # closes at the last "}" (or meets the "{" an earlier scan left open there), so none is memoized.
    loose = "{'name': 'bash', 'arguments': {'command': 'ls'},}"
    assert (
        prose("{“ " * 20 + "” } " + loose)
        == prose("{“ " * 20 + "” { “ " + loose)
        == [("bash", {"command": "ls"}, True)]
    )
    assert prose("{“ " * 2_000 + "” } " + loose) == []
    assert prose("{“ " * 2_000 + "” { “ " + loose) == []


def test_a_brace_one_scan_read_in_a_string_and_another_did_not_is_answered_from_the_first() -> None:
    # The scan from the first "{" reads “{” as a string and closes the "{}" after it; the scan from the second "{"
    # (outside any string) meets that "{}" and jumps over it instead of scanning it again.
    assert prose("}{“{”{} then " + LS) == [BASH]
    assert prose("so {“ {”name”: 1, {}} then " + LS) == [BASH]


def test_letters_around_an_object_are_no_quotes_and_one_quote_is_not_enough() -> None:
    for text in (f"aX{LS}Xb", f'"{LS} here', f'run {LS}" ', f'"  {LS}  "', f'"  {LS}"', f'"{LS}  "'):
        assert prose(text) == [BASH], text
    for text in (f'" {LS} "', f"`{LS}`", f"«{LS}»"):
        assert prose(text) == [], text


def test_an_example_counts_on_its_own_line_within_200_characters() -> None:
    assert prose(f"for example {LS}") == []
    assert prose(f"intro\nfor example {LS}") == []
    assert prose(f"for example:\n{LS}") == [BASH]
    assert prose(f"x\nfor example:\n{LS}") == [BASH]
    assert prose(f"for example {LS}\nmore") == []
    assert prose("format:" + "x" * 193 + LS) == []
    assert prose("format:" + "x" * 194 + LS) == [BASH]


def test_a_negation_counts_in_its_clause_within_80_characters() -> None:
    assert prose(f"I will not call {LS}") == []
    assert prose(f"I will not wait, so call {LS}") == [BASH]
    assert prose(f'"{LS}" is quoted, so run {DIR}') == [LIST]
    assert prose("not " + "x" * 76 + LS) == []
    assert prose("not " + "x" * 77 + LS) == [BASH]


def test_a_brace_answered_from_an_earlier_scan_reads_as_a_fresh_scan_would() -> None:
    # From the first "{", “{” is a string and the call object after it closes; the scan from the "{”" (outside any
    # string there) meets that object, already answered, and must still close around it, as a scan of a text with
    # no earlier start does: one object, read once, that is no call.
    memoized, fresh = '{"a": {, “{” ' + LS + "}", "{ {, “{” " + LS + "}"
    assert prose(memoized) == prose(fresh) == []
    # Braces already answered inside quotes that one scan reads and another does not: nothing, and nothing raised.
    assert prose('{“{""""”""{') == []
    assert prose('{""""“{""{”{') == []
    # The first scan stops at its window with the first "{" of "{{" open: a later scan meets it, answered (never
    # closes), and stops there without reading the second.
    head = '{"a": {, “{” '
    assert prose(head + "x" * (MAX_REPAIR_CHARS - 1 - len(head)) + "{{") == []
