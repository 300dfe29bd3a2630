"""Pins for prepare_calls, the stall repairs and the vetting of calls written as text: what runs, what is said."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import pytest
from pydantic import BaseModel

from sessions.repair import (
    FlatMap,
    ImmediateResult,
    ModelArgumentsError,
    RepairKind,
    StormGuard,
    flatten_schema,
    prepare_calls,
    repair_note,
)
from sessions.repair.stall import repeated_name, repeated_object, run_together
from sessions.repair.vet import trim_bodies, validates
from sessions.wire.messages import FunctionSchema, ToolSchema
from tests.sessions.repair.support import message, prepare


class BodyArgs(BaseModel):
    path: str = ""
    src_file: str = ""
    content: str = ""
    pathology: str = ""
    count: int = 0
    ratio: float = 0.0
    flag: bool = False
    maybe: int | None = None
    choice: Literal["a", "b"] = "a"
    maybe_choice: Literal["a", "b"] | None = None
    when: datetime | None = None
    stamp: datetime = datetime(2020, 1, 1)
    note: str | None = None
    fixed: Literal["x"] = "x"


@dataclass(frozen=True)
class Offered:
    args_model: type[BaseModel] = BodyArgs
    storm_exempt: bool = False


TOOL = Offered()


TRIMMED = ["path", "src_file", "count", "ratio", "flag", "maybe", "choice", "maybe_choice", "stamp", "fixed", "PATH"]


@pytest.mark.parametrize("key", [*TRIMMED, "a.path"])
def test_a_path_identifier_or_scalar_body_is_trimmed(key: str) -> None:
    assert trim_bodies(TOOL, {key: "\n  x \n", "content": " c "}, (key,)) == {key: "x", "content": " c "}


@pytest.mark.parametrize("key", ["content", "pathology", "note", "unknown"])
def test_a_content_body_stays_verbatim(key: str) -> None:
    assert trim_bodies(TOOL, {key: "\n  x \n"}, (key,)) == {key: "\n  x \n"}


def test_only_the_named_bodies_are_trimmed_and_no_bodies_keeps_the_same_arguments() -> None:
    args = {"path": " a ", "src_file": " b "}
    assert trim_bodies(TOOL, args, ()) is args
    assert trim_bodies(TOOL, args, ("path",)) == {"path": "a", "src_file": " b "}
    assert args == {"path": " a ", "src_file": " b "}  # the caller's dict is not written into
    assert trim_bodies(TOOL, {"path": 3}, ("path",)) == {"path": 3}


def test_validates_answers_what_dispatch_would() -> None:
    assert validates(TOOL, {"path": "a", "count": "3"})
    assert not validates(TOOL, {"count": "three"})
    assert not validates(TOOL, {"choice": "c"})


def test_a_name_repeating_two_different_tools_is_no_single_tool() -> None:
    assert repeated_name("read_fileread_file", ["read_file", "write_file"]) == "read_file"
    assert repeated_name("read_filewrite_file", ["read_file", "write_file"]) is None


def test_names_run_together_are_split_at_every_position_and_only_when_two_or_more() -> None:
    assert run_together("ab", ["a", "b"]) == ("a", "b")
    assert run_together("aa", ["a", "aa"]) is None  # a name that is a tool is that tool
    assert run_together("", ["a"]) is None
    assert run_together("read_file ,", ["read_file"]) is None
    assert repeated_name("read_file;", ["read_file"]) is None
    assert run_together("ab" * 200, ["ab"]) == ("ab",) * 200
    assert run_together("ab" * 200 + "a", ["ab", "a"]) is None  # longer than 400 characters: not looked at


def test_an_object_written_twice_is_that_object_once_even_when_the_last_copy_is_cut() -> None:
    assert repeated_object('{"a":1}{"a": 1') == ({"a": 1}, 2)  # whitespace differs between the copies
    assert repeated_object('{"a": 1}{"a"') == ({"a": 1}, 2)
    assert repeated_object('{"a": 1}, {"a": 1}') == ({"a": 1}, 2)


def test_what_is_not_repetitions_of_one_object_is_no_stall() -> None:
    assert repeated_object('{"a": 1}') is None
    assert repeated_object("[1] [1]") is None
    assert repeated_object('{"a": 1} [1]') is None
    assert repeated_object('{"a": 1}{"a": 1} x') is None
    assert repeated_object('{"a": 1} {"b"') is None


def test_different_objects_are_shown_to_the_model_shortened() -> None:
    long = '{"k": "' + "x" * 153 + '"}'  # 161 characters
    fits = '{"k": "' + "y" * 151 + '"}'  # 160 characters
    with pytest.raises(ModelArgumentsError) as caught:
        repeated_object(long + fits)
    shown = long[:157] + "..."
    assert str(caught.value) == (
        f"The arguments hold 2 different JSON objects one after another ({shown}; {fits}); a call takes exactly "
        "one. Did you mean 2 calls? Send each object as the arguments of its own tool call."
    )


def test_the_note_in_front_of_a_repaired_result_says_what_happened() -> None:
    assert repair_note((RepairKind.STALL, RepairKind.TRUNCATION)) == (
        "[note: your arguments were cut off or malformed and were closed automatically; "
        "the last value may be incomplete: check the result]"
    )
    assert (
        repair_note((RepairKind.STALL,)) == "[note: your tool call repeated itself (a stalled reply); it was run once]"
    )
    assert repair_note((RepairKind.FLATTEN, RepairKind.SCAVENGE)) is None


def test_an_unknown_tool_is_answered_with_the_names_the_model_can_use() -> None:
    batch = prepare(message(("read_filewrite_file", "{}"), ("read_fil", "{}"), ("zzz", "{}")))
    valid = "bash, edit_file"
    contents = [getattr(item, "content", "") for item in batch.items]
    assert contents[0].startswith(
        "Error: there is no tool named 'read_filewrite_file'. It reads as 2 tool names run together: did you mean "
        "2 calls, 'read_file', then 'write_file', each with its own arguments? Valid tool names: "
    )
    assert contents[1].startswith(
        "Error: there is no tool named 'read_fil'. Did you mean 'read_file'? Valid tool names: "
    )
    assert contents[2].startswith("Error: there is no tool named 'zzz'. Valid tool names: ")
    assert all(c.endswith(". Call one of these with arguments that match its schema.") for c in contents)
    assert valid in contents[2]
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in batch.events] == [
        (RepairKind.UNKNOWN_TOOL, "call_00", "read_filewrite_file", "unknown tool 'read_filewrite_file'"),
        (RepairKind.UNKNOWN_TOOL, "call_01", "read_fil", "unknown tool 'read_fil'"),
        (RepairKind.UNKNOWN_TOOL, "call_02", "zzz", "unknown tool 'zzz'"),
    ]
    assert batch.failures == 3


def test_each_repair_of_a_tool_call_is_an_event_with_its_reason() -> None:
    batch = prepare(
        message(("read_fileread_file", '{"path": "a.py"}{"path": "a.py"}'), ("read_file", '{"path": "b.py"')),
        "length",
    )
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in batch.events] == [
        (RepairKind.STALL, "call_00", "read_file", "tool name 'read_fileread_file' is 'read_file' repeated (a stall)"),
        (RepairKind.STALL, "call_00", "read_file", "arguments object written 2 times (a stall)"),
        (
            RepairKind.TRUNCATION,
            "call_01",
            "read_file",
            "arguments cut off at finish_reason=length; closed with json-repair",
        ),
    ]
    assert [c.repairs for c in batch.calls] == [(RepairKind.STALL,), (RepairKind.TRUNCATION,)]
    assert batch.failures == 3
    malformed = prepare(message(("read_file", "{'path': 'b.py'}")), "stop")
    assert malformed.events[0].detail == "arguments malformed (finish_reason=stop); closed with json-repair"


def test_arguments_that_are_no_object_are_answered_as_not_run() -> None:
    batch = prepare(message(("read_file", "[1, 2]")))
    (item,) = batch.items
    assert getattr(item, "content", "").startswith("Error: read_file was not run. ")
    assert batch.events[0].kind is RepairKind.BAD_ARGUMENTS
    assert batch.failures == 1


def test_a_storm_suppresses_then_ends_the_turn_and_later_calls_are_not_run() -> None:
    storm = StormGuard(threshold=2, storms_per_turn=2)
    same = ("read_file", '{"path": "a.py"}')
    first = prepare(message(same, same), storm=storm)
    assert [type(i).__name__ for i in first.items] == ["RepairedCall", "ImmediateResult"]
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in first.events] == [
        (RepairKind.STORM, "call_01", "read_file", "suppress: identical call repeated")
    ]
    assert not first.end_turn and first.storm_summary is None
    second = prepare(message(same, ("bash", '{"command": "ls"}')), storm=storm)
    assert second.events[0].detail == "end_turn: identical call repeated"
    assert second.end_turn and second.storm_summary == storm.summary()
    assert getattr(second.items[1], "content", "") == "Not run: the turn was ended by the storm guard."
    text = prepare(message(content='{"name": "read_file", "arguments": {"path": "c.py"}}'), storm=storm)
    assert text.scavenged == ()
    assert [r.content for r in text.scavenged_results] == ["Not run: the turn was ended by the storm guard."]
    assert not text.empty_reply


def test_calls_written_in_text_past_the_cap_are_answered_as_not_run() -> None:
    written = " ".join(
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{i}.py"}}}}</tool_call>' for i in range(3)
    )
    batch = prepare(message(content=written), max_scavenged=1)
    assert [c.args for c in batch.scavenged] == [{"path": "f0.py"}]
    assert [r.content for r in batch.scavenged_results] == [
        "Not run: at most 1 calls written in your text are run per reply. If you still need this read_file call, "
        "make it through the tool-calling interface."
    ] * 2
    cap = [e for e in batch.events if e.detail.endswith("per reply)")]
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in cap] == [
        (
            RepairKind.SCAVENGE,
            batch.scavenged_results[0].call_id,
            "read_file",
            "2 more calls written in content not run (at most 1 per reply)",
        )
    ]
    assert [(e.tool, e.detail) for e in batch.events if e.call_id == batch.scavenged[0].id] == [
        ("read_file", "call written as tool_call_tag markup in content")
    ]
    none = prepare(message(content=written), max_scavenged=0)
    assert none.scavenged == ()
    assert len(none.scavenged_results) == 3  # every call is answered, the first too
    assert none.events[0].detail == "3 more calls written in content not run (at most 0 per reply)"


def test_arguments_that_are_no_object_are_answered_with_an_event_naming_the_call_and_why() -> None:
    batch = prepare(message(("bash", "{}"), ("read_file", '{"path": "a"}{"path": "b"}')), "length")
    why = (
        'The arguments hold 2 different JSON objects one after another ({"path": "a"}; {"path": "b"}); a call takes '
        "exactly one. Did you mean 2 calls? Send each object as the arguments of its own tool call. Your reply was "
        "cut off at the output limit (finish_reason=length): send the call again with shorter arguments (for a "
        "large file, write it in several smaller parts)."
    )
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in batch.events] == [
        (RepairKind.BAD_ARGUMENTS, "call_01", "read_file", why)
    ]
    assert batch.items[1] == ImmediateResult("call_01", f"Error: read_file was not run. {why}")
    stopped = prepare(message(("read_file", '{"path": "a"}{"path": "b"}')), "stop")
    assert "finish_reason=length" not in stopped.events[0].detail


def test_with_no_tools_known_an_unknown_name_is_told_there_are_none() -> None:
    batch = prepare_calls(message(("bash", "{}")), "stop", known_tools={}, storm=StormGuard())
    assert batch.items == (
        ImmediateResult(
            "call_00",
            "Error: there is no tool named 'bash'. Valid tool names: (none). "
            "Call one of these with arguments that match its schema.",
        ),
    )


def test_each_repair_of_a_call_written_in_text_is_an_event_naming_the_call() -> None:
    written = '<tool_call>{"name": "read_fileread_file", "arguments": {"path": "a.py"}</tool_call>'  # cut, stalled
    batch = prepare(message(content=written))
    (call,) = batch.scavenged
    assert (call.name, call.args) == ("read_file", {"path": "a.py"})
    assert call.repairs == (RepairKind.SCAVENGE, RepairKind.STALL, RepairKind.TRUNCATION)
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in batch.events] == [
        (RepairKind.SCAVENGE, call.id, "read_file", "call written as tool_call_tag markup in content"),
        (RepairKind.STALL, call.id, "read_file", "tool name 'read_fileread_file' repeats 'read_file'"),
        (RepairKind.TRUNCATION, call.id, "read_file", "scavenged arguments closed with json-repair"),
    ]


def test_every_call_written_in_text_after_the_turn_ended_is_answered_as_not_run() -> None:
    storm = StormGuard(threshold=2, storms_per_turn=1)
    same = ("read_file", '{"path": "a.py"}')
    assert prepare(message(same, same), storm=storm).end_turn
    written = " ".join(
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{i}.py"}}}}</tool_call>' for i in range(2)
    )
    batch = prepare(message(content=written), storm=storm)
    ids = [e.call_id for e in prepare(message(content=written)).events]
    assert len(set(ids)) == 2
    assert batch.scavenged_results == tuple(
        ImmediateResult(i, "Not run: the turn was ended by the storm guard.") for i in ids
    )


def test_a_polling_call_keeps_its_id_and_its_repairs() -> None:
    batch = prepare(message(("job_output", '{"job_id": "j"}'), ("job_output", '{"job_id": "j"')), "length")
    assert [(c.id, c.name, c.args, c.repairs) for c in batch.calls] == [
        ("call_00", "job_output", {"job_id": "j"}, ()),
        ("call_01", "job_output", {"job_id": "j"}, (RepairKind.TRUNCATION,)),
    ]


NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "options": {
            "type": "object",
            "properties": {
                "limits": {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}
            },
            "required": ["limits"],
        },
    },
    "required": ["path", "options"],
}
_, NESTED_MAP = flatten_schema(ToolSchema(function=FunctionSchema(name="search", parameters=NESTED_SCHEMA)))


class Lines(BaseModel):
    lines: int


class Options(BaseModel):
    limits: Lines


class SearchArgs(BaseModel):
    path: str
    options: Options


def test_flattened_arguments_are_nested_back_before_they_are_vetted_and_the_event_names_the_call() -> None:
    known: dict[str, FlatMap | None] = {"search": NESTED_MAP}
    tools = {"search": Offered(args_model=SearchArgs)}
    flat = '{"path": "s", "options.limits.lines": 1}'
    batch = prepare_calls(
        message(("search", flat), content=""), "stop", known_tools=known, storm=StormGuard(), tools=tools
    )
    assert [(e.kind, e.call_id, e.tool, e.detail) for e in batch.events] == [
        (RepairKind.FLATTEN, "call_00", "search", "nested dotted arguments back into objects")
    ]
    written = f'<tool_call>{{"name": "search", "arguments": {flat}}}</tool_call>'
    text = prepare_calls(message(content=written), "stop", known_tools=known, storm=StormGuard(), tools=tools)
    assert [(c.name, c.args, c.repairs) for c in text.scavenged] == [
        ("search", {"path": "s", "options": {"limits": {"lines": 1}}}, (RepairKind.SCAVENGE, RepairKind.FLATTEN))
    ]
