"""prepare_calls: one assistant reply in, what to execute out; the re-sent message bytes never change."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.repair import (
    FlatMap,
    ImmediateResult,
    RepairedCall,
    RepairKind,
    StormGuard,
    flatten_schema,
    prepare_calls,
    repair_note,
)
from sessions.wire.messages import (
    AssistantMessage,
    ChatCompletion,
    FunctionCall,
    FunctionSchema,
    ToolCall,
    ToolSchema,
    encode_message,
)
from tests import wire_samples
from tests.sessions.repair.examples import examples

WIRE = wire_samples.WIRE

DEEP_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "options": {
            "type": "object",
            "properties": {
                "limits": {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}
            },
        },
    },
    "required": ["path"],
}
_, DEEP_MAP = flatten_schema(ToolSchema(function=FunctionSchema(name="search", parameters=DEEP_SCHEMA)))
KNOWN: dict[str, FlatMap | None] = {"read_file": None, "bash": None, "write_file": None, "search": DEEP_MAP}


def call(id_: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=id_, function=FunctionCall(name=name, arguments=arguments))


def reply(*calls: ToolCall, content: str | None = "", reasoning: str | None = "thinking") -> AssistantMessage:
    return AssistantMessage(content=content, reasoning_content=reasoning, tool_calls=tuple(calls))


def test_plain_calls_pass_through_in_order() -> None:
    msg = reply(call("call_0", "read_file", '{"path": "a.py"}'), call("call_1", "bash", '{"command": "ls"}'))
    batch = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard())
    assert batch.items == (
        RepairedCall("call_0", "read_file", {"path": "a.py"}),
        RepairedCall("call_1", "bash", {"command": "ls"}),
    )
    assert batch.events == () and batch.failures == 0 and not batch.end_turn


def test_recorded_deepseek_reply_is_prepared() -> None:
    data = json.loads((WIRE / "v4flash_toolcall_nonstream.json").read_text())
    completion = ChatCompletion.model_validate(data)
    msg = completion.choices[0].message.to_assistant()
    batch = prepare_calls(msg, completion.choices[0].finish_reason, known_tools={"weather": None}, storm=StormGuard())
    assert batch.items == (RepairedCall("call_00_lCIkdHRa7AKmCG3TlxXz1061", "weather", {"location": "San Francisco"}),)
    # the same reply with a tool we do not have: an error result that lists the valid names
    other = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard())
    item = other.items[0]
    assert isinstance(item, ImmediateResult) and item.is_error
    assert "bash, read_file, search, write_file" in item.content
    assert [e.kind for e in other.events] == [RepairKind.UNKNOWN_TOOL] and other.failures == 1


def test_unknown_tool_suggests_the_closest_name() -> None:
    batch = prepare_calls(reply(call("c", "read_files", "{}")), "tool_calls", known_tools=KNOWN, storm=StormGuard())
    item = batch.items[0]
    assert isinstance(item, ImmediateResult) and "Did you mean 'read_file'?" in item.content


def test_truncated_last_call_is_closed_and_counted() -> None:
    msg = reply(
        call("call_0", "read_file", '{"path": "a.py"}'),
        call("call_1", "write_file", '{"path": "b.py", "content": "def f():\\n    return 4'),
    )
    batch = prepare_calls(msg, "length", known_tools=KNOWN, storm=StormGuard())
    second = batch.items[1]
    assert isinstance(second, RepairedCall)
    assert second.args == {"path": "b.py", "content": "def f():\n    return 4"}
    assert second.repairs == (RepairKind.TRUNCATION,)
    assert repair_note(second.repairs) is not None
    assert [(e.kind, e.call_id) for e in batch.events] == [(RepairKind.TRUNCATION, "call_1")]
    assert "finish_reason=length" in batch.events[0].detail
    assert batch.failures == 1


def test_arguments_that_cannot_be_repaired_give_the_parse_error() -> None:
    batch = prepare_calls(reply(call("c", "bash", "ls -la")), "tool_calls", known_tools=KNOWN, storm=StormGuard())
    item = batch.items[0]
    assert isinstance(item, ImmediateResult)
    assert item.content.startswith("Error: bash was not run.") and "JSON" in item.content
    assert batch.events[0].kind == RepairKind.BAD_ARGUMENTS and batch.failures == 1


def test_flattened_arguments_are_nested_back_and_not_counted_as_failures() -> None:
    msg = reply(call("c", "search", '{"path": "src", "options.limits.lines": 5}'))
    batch = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard())
    assert batch.items == (
        RepairedCall("c", "search", {"path": "src", "options": {"limits": {"lines": 5}}}, (RepairKind.FLATTEN,)),
    )
    assert [e.kind for e in batch.events] == [RepairKind.FLATTEN] and batch.failures == 0


def test_storm_in_one_batch_suppresses_then_ends_the_turn() -> None:
    same = '{"command": "pytest"}'
    msg = reply(*(call(f"c{i}", "bash", same) for i in range(5)), call("c5", "read_file", '{"path": "x"}'))
    batch = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard())
    kinds = [type(item).__name__ for item in batch.items]
    assert kinds == [
        "RepairedCall",
        "RepairedCall",
        "ImmediateResult",
        "ImmediateResult",
        "ImmediateResult",
        "ImmediateResult",
    ]
    assert [item.call_id for item in batch.items if isinstance(item, ImmediateResult)] == ["c2", "c3", "c4", "c5"]
    third = batch.items[2]
    assert isinstance(third, ImmediateResult) and "Change approach" in third.content
    assert batch.end_turn and batch.storm_summary is not None and "bash" in batch.storm_summary
    assert [e.kind for e in batch.events] == [RepairKind.STORM, RepairKind.STORM]
    assert batch.failures == 2


def test_storm_across_replies_of_one_turn() -> None:
    guard = StormGuard()
    msg = reply(call("c", "read_file", '{"path": "x"}'))
    assert isinstance(prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=guard).items[0], RepairedCall)
    assert isinstance(prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=guard).items[0], RepairedCall)
    third = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=guard)
    assert isinstance(third.items[0], ImmediateResult) and not third.end_turn
    guard.reset_turn()
    assert isinstance(prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=guard).items[0], RepairedCall)


def test_calls_in_reasoning_are_scavenged_when_tool_calls_is_empty() -> None:
    reasoning = (
        "Let me check the directory.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>bash\n"
        '```json\n{"command": "ls src"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    msg = reply(content="", reasoning=reasoning)
    batch = prepare_calls(msg, "stop", known_tools=KNOWN, storm=StormGuard())
    assert batch.items == ()
    assert len(batch.scavenged) == 1
    sc = batch.scavenged[0]
    assert (sc.name, sc.args, sc.repairs) == ("bash", {"command": "ls src"}, (RepairKind.SCAVENGE,))
    assert sc.id.startswith("scv_")
    assert [(e.kind, e.call_id) for e in batch.events] == [(RepairKind.SCAVENGE, sc.id)]
    assert batch.failures == 1 and not batch.empty_reply


def test_scavenged_calls_are_nested_back_and_storm_checked() -> None:
    content = '<tool_call>{"name": "search", "arguments": {"path": "s", "options.limits.lines": 1}}</tool_call>'
    guard = StormGuard()
    first = prepare_calls(reply(content=content), "stop", known_tools=KNOWN, storm=guard)
    assert first.scavenged[0].args == {"path": "s", "options": {"limits": {"lines": 1}}}
    assert first.scavenged[0].repairs == (RepairKind.SCAVENGE, RepairKind.FLATTEN)
    prepare_calls(reply(content=content), "stop", known_tools=KNOWN, storm=guard)
    third = prepare_calls(reply(content=content), "stop", known_tools=KNOWN, storm=guard)
    assert third.scavenged == ()
    assert len(third.scavenged_results) == 1 and "Change approach" in third.scavenged_results[0].content


def test_no_scavenging_when_tool_calls_are_present() -> None:
    reasoning = '<tool_call>{"name": "bash", "arguments": {"command": "rm -rf build"}}</tool_call>'
    msg = reply(call("c", "read_file", '{"path": "x"}'), reasoning=reasoning)
    assert prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard()).scavenged == ()


def test_stop_with_only_reasoning_is_flagged() -> None:
    batch = prepare_calls(
        reply(content="", reasoning="I should look at..."), "stop", known_tools=KNOWN, storm=StormGuard()
    )
    assert batch.empty_reply and batch.items == () and batch.scavenged == ()
    assert not prepare_calls(reply(content="Done."), "stop", known_tools=KNOWN, storm=StormGuard()).empty_reply


# ------------------------------------------------------------------------------------ the re-sent bytes never change

raw_arguments = st.sampled_from(
    [
        '{"path": "a.py"}',
        '{"path":"a.py" }',
        '{"command": "ls',
        "ls -la",
        "",
        '{"options.limits.lines": 3, "path": "p"}',
        '{"z": 1, "a": 2}',
        '{"text": "caf\\u00e9 \\ud83d\\ude00"}',
        "[1]",
    ]
) | st.text(max_size=40)
tool_names = st.sampled_from([*KNOWN, "unknown_tool"])
calls_strategy = st.lists(st.tuples(tool_names, raw_arguments), max_size=8)
markup = st.sampled_from(
    [
        "",
        '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>',
        '<function=read_file>{"path": "x"}</function>',
    ]
)


@settings(max_examples=examples(200), deadline=None)
@given(
    calls=calls_strategy,
    content=st.none() | markup | st.text(max_size=30),
    reasoning=st.none() | markup | st.text(max_size=30),
    finish=st.sampled_from(["stop", "length", "tool_calls", None]),
)
def test_assistant_message_bytes_are_unchanged_by_preparation(
    calls: list[tuple[str, str]], content: str | None, reasoning: str | None, finish: str | None
) -> None:
    msg = AssistantMessage(
        content=content,
        reasoning_content=reasoning,
        tool_calls=tuple(call(f"call_{i}", name, raw) for i, (name, raw) in enumerate(calls)),
    )
    before = encode_message(msg)
    dump_before = msg.model_dump()
    batch = prepare_calls(msg, finish, known_tools=KNOWN, storm=StormGuard())
    assert encode_message(msg) == before
    assert msg.model_dump() == dump_before
    # every tool_call id gets exactly one item, in order
    ids = [item.id if isinstance(item, RepairedCall) else item.call_id for item in batch.items]
    assert ids == [c.id for c in msg.tool_calls]
    # the raw arguments in the message are still the model's, whatever was executed
    assert [c.function.arguments for c in msg.tool_calls] == [raw for _, raw in calls]
    assert batch.failures == sum(1 for e in batch.events if e.kind != RepairKind.FLATTEN)


def test_executed_args_can_be_mutated_without_touching_the_message() -> None:
    msg = reply(call("c", "search", '{"path": "src", "options.limits.lines": 5}'))
    before = encode_message(msg)
    batch = prepare_calls(msg, "tool_calls", known_tools=KNOWN, storm=StormGuard())
    item = batch.items[0]
    assert isinstance(item, RepairedCall)
    args: dict[str, Any] = item.args
    args["options"]["limits"]["lines"] = 99
    assert encode_message(msg) == before
