"""Issue 31: the shapes DeepSeek really writes its calls in, taken only when they are calls of the session's tools.

Each family has several realistic phrasings that must yield the call, and ones that must not: JSON naming a tool the
session does not have, JSON the model quotes or gives as an example, a call whose arguments fail validation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessions.repair import ImmediateResult, RepairedCall, RepairKind, StormGuard
from sessions.wire.messages import ChatCompletion, encode_message
from tests import wire_samples
from tests.sessions.repair.support import message, prepare, taken

Call = tuple[str, dict[str, Any]]

# ------------------------------------------------------------------------ 1. a call written as JSON inside prose

PROSE_CALLS: list[tuple[str, Call]] = [
    (
        "The test imports parse_config from config.py but I haven't seen that file yet, so I should call "
        '{"name": "read_file", "arguments": {"path": "src/config.py"}} to check what it returns.',
        ("read_file", {"path": "src/config.py"}),
    ),
    (
        "Let me list the package first.\n\n"
        '{"name": "list_dir", "arguments": {"path": "src"}}\n\n'
        "Then I'll decide which module to open.",
        ("list_dir", {"path": "src"}),
    ),
    (
        "The traceback points at line 42. Next step: "
        '{"name": "read_file", "parameters": {"path": "app/models.py", "start_line": 30, "end_line": 60}}.',
        ("read_file", {"path": "app/models.py", "start_line": 30, "end_line": 60}),
    ),
    (
        "用户想修复这个 bug。我需要先看看文件："
        '{"name": "read_file", "arguments": {"path": "app/models.py"}}，然后再修改。',
        ("read_file", {"path": "app/models.py"}),
    ),
    (
        "I need the failing output first. Calling "
        '{"type": "function", "function": {"name": "bash", '
        '"arguments": "{\\"command\\": \\"python -m pytest -x -q\\"}"}} now.',
        ("bash", {"command": "python -m pytest -x -q"}),
    ),
    (
        "OK so the glob should find the tests: "
        '{"type": "function", "function": {"name": "glob", "arguments": {"pattern": "tests/test_*.py"}}}',
        ("glob", {"pattern": "tests/test_*.py"}),
    ),
]

NOT_CALLS_IN_PROSE = [
    # a tool this session does not have
    'I could call {"name": "web_search", "arguments": {"query": "python csv quoting"}} but there is no such tool.',
    # quoted: the model discusses a format
    'The README says a request looks like \'{"name": "read_file", "arguments": {"path": "notes.md"}}\' — '
    "that is the wire format, nothing I need to run.",
    'The fixture\'s first line is `{"name": "bash", "arguments": {"command": "rm -rf build"}}`, which the parser '
    "must reject.",
    'The user pasted “{"name": "bash", "arguments": {"command": "make deploy"}}” from their logs.',
    # an example, or negated
    'For example, {"name": "bash", "arguments": {"command": "make"}} would run make, but nobody asked for that.',
    'A valid request, e.g. {"name": "read_file", "arguments": {"path": "a.py"}}, has both keys.',
    'I should not call {"name": "write_file", "arguments": {"path": "setup.py", "content": ""}} before reading it.',
    'Instead of {"name": "bash", "arguments": {"command": "cat README.md"}} I will answer from what I have.',
    # a call it already made, recalled
    'I already ran {"name": "bash", "arguments": {"command": "pytest -q"}} and saw two failures.',
    # code, not prose
    '```python\nCALL = {"name": "bash", "arguments": {"command": "ls"}}\n```\nThis constant is what the test sends.',
    # arguments that fail validation: an unknown parameter, a wrong type, a required parameter missing
    'so I should call {"name": "read_file", "arguments": {"file": "a.py"}} to check',
    'so I should call {"name": "read_file", "arguments": {"path": "a.py", "start_line": "the top"}} to check',
    'so I should call {"name": "write_file", "arguments": {"path": "a.py"}} now',
    # cut off inside the object: a parameter cut mid-value is never filled in
    'so I should call {"name": "write_file", "arguments": {"path": "a.py", "content": "print(',
    # JSON that is no call at all
    'The package.json has {"name": "my-package", "version": "1.0.0"} at the top.',
]


@pytest.mark.parametrize(("reasoning", "expected"), PROSE_CALLS)
def test_a_call_written_as_json_in_reasoning_prose_is_taken(reasoning: str, expected: Call) -> None:
    assert taken(reasoning) == [expected]
    batch = prepare(message(reasoning=reasoning))
    assert batch.events[0].kind == RepairKind.SCAVENGE and "prose_json" in batch.events[0].detail
    assert not batch.empty_reply


@pytest.mark.parametrize("reasoning", NOT_CALLS_IN_PROSE)
def test_json_the_model_only_talks_about_is_no_call(reasoning: str) -> None:
    assert taken(reasoning) == []
    assert taken(content=reasoning) == []


def test_prose_calls_in_content_win_over_reasoning() -> None:
    content = 'Running the tests: {"name": "bash", "arguments": {"command": "pytest -q"}}'
    reasoning = 'maybe {"name": "read_file", "arguments": {"path": "a.py"}} first'
    assert taken(reasoning, content) == [("bash", {"command": "pytest -q"})]


def test_reasoning_is_not_scavenged_when_the_reply_has_real_tool_calls() -> None:
    reasoning = 'so I should call {"name": "bash", "arguments": {"command": "rm -rf build"}} first'
    batch = prepare(message(("read_file", '{"path": "a.py"}'), reasoning=reasoning), "tool_calls")
    assert batch.scavenged == () and batch.calls == (RepairedCall("call_00", "read_file", {"path": "a.py"}),)


def test_a_recorded_deepseek_reply_with_its_call_moved_into_the_reasoning() -> None:
    """The recorded v4-flash reply, as the model misbehaves with it: no tool_calls, the call in its reasoning."""
    data = json.loads((wire_samples.WIRE / "v4flash_toolcall_nonstream.json").read_text())
    recorded = ChatCompletion.model_validate(data).choices[0].message.to_assistant()
    (real,) = recorded.tool_calls
    written = json.dumps({"name": "read_file", "arguments": {"path": "weather/" + "sf.json"}})
    reasoning = f"{recorded.reasoning_content} So I should call {written} to check the forecast file."
    assert "weather tool" in reasoning and real.function.name == "weather"
    assert taken(reasoning) == [("read_file", {"path": "weather/sf.json"})]


# ------------------------------------------------------------------------------------ 2. the R1 free-form variant

R1_CALLS: list[tuple[str | None, str | None, Call]] = [
    (
        None,
        'Look at the README first.\n```json\n{"tool_name": "read_file", "tool_args": {"path": "README.md"}}\n```',
        ("read_file", {"path": "README.md"}),
    ),
    (
        None,
        'decide: {"tool_name": "grep", "tool_args": {"pattern": "def slugify", "path": "."}} and then edit it',
        ("grep", {"pattern": "def slugify", "path": "."}),
    ),
    ('{"tool_name": "list_dir", "tool_args": {"path": "tests"}}', None, ("list_dir", {"path": "tests"})),
    (
        None,
        'Run it: {"tool_name": "bash", "tool_args": "{\\"command\\": \\"python3 -m unittest\\"}"}',
        ("bash", {"command": "python3 -m unittest"}),
    ),
]


@pytest.mark.parametrize(("content", "reasoning", "expected"), R1_CALLS)
def test_the_r1_tool_name_tool_args_variant_is_taken(
    content: str | None, reasoning: str | None, expected: Call
) -> None:
    assert taken(reasoning, content) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"tool_name": "search_docs", "tool_args": {"q": "csv"}}\n```',  # not a tool of the session
        'An R1 call looks like {"tool_name": "read_file", "tool_args": {"path": "a.py"}} in the logs.',  # discussed
        '{"tool_name": "read_file"}',  # no arguments at all: not the shape
    ],
)
def test_r1_variant_that_is_no_call(text: str) -> None:
    assert taken(text) == [] and taken(content=text) == []


# -------------------------------------------------------------------------------- 3. loose JSON, fenced or whole

LOOSE_CALLS: list[tuple[str | None, str | None, Call]] = [
    (
        None,
        'Check the test.\n```json\n{"name": "read_file", "arguments": {"path": "tests/test_app.py",},}\n```',
        ("read_file", {"path": "tests/test_app.py"}),
    ),
    (
        '{"name": "grep", "arguments": {"pattern": "TODO", "path": "src", "ignore_case": True}}',
        None,
        ("grep", {"pattern": "TODO", "path": "src", "ignore_case": True}),
    ),
    (
        None,
        "```\n{“name”: “list_dir”, “arguments”: {“path”: “docs”}}\n```",
        ("list_dir", {"path": "docs"}),
    ),
    (
        "{'name': 'bash', 'arguments': {'command': 'git status --short'}}",
        None,
        ("bash", {"command": "git status --short"}),
    ),
    (
        None,
        "plan: {“name”: “read_file”, “arguments”: {“path”: “setup.cfg”}} then compare",
        ("read_file", {"path": "setup.cfg"}),
    ),
]


@pytest.mark.parametrize(("content", "reasoning", "expected"), LOOSE_CALLS)
def test_loose_json_in_a_fenced_or_whole_text_call_is_repaired(
    content: str | None, reasoning: str | None, expected: Call
) -> None:
    batch = prepare(message(content=content, reasoning=reasoning))
    assert [(c.name, c.args) for c in batch.scavenged] == [expected]
    assert RepairKind.TRUNCATION in batch.scavenged[0].repairs  # reported: read with json-repair


@pytest.mark.parametrize(
    "text",
    [
        "```python\n{'name': 'bash', 'arguments': {'command': 'ls'}}\n```",  # a dict literal in Python code
        '{"name": "deploy", "arguments": {"env": "prod",}}',  # unknown tool
    ],
)
def test_loose_json_that_is_no_call(text: str) -> None:
    assert taken(text) == [] and taken(content=text) == []


# ------------------------------------------------------------------------------------------------- 4. stalls


def test_an_arguments_object_written_twice_runs_once() -> None:
    for raw in (
        '{"path": "src/app.py"}{"path": "src/app.py"}',
        '{"path": "src/app.py"}\n{"path": "src/app.py"}',
        '{"path": "src/app.py"}{"path": "src/app.py"}{"path": "sr',  # the third copy cut off
    ):
        batch = prepare(message(("read_file", raw)), "tool_calls")
        assert batch.items == (RepairedCall("call_00", "read_file", {"path": "src/app.py"}, (RepairKind.STALL,)),)
        assert [e.kind for e in batch.events] == [RepairKind.STALL]


def test_different_objects_run_together_get_a_did_you_mean() -> None:
    batch = prepare(message(("read_file", '{"path": "a.py"}{"path": "b.py"}')), "tool_calls")
    (item,) = batch.items
    assert isinstance(item, ImmediateResult) and item.is_error
    assert '{"path": "a.py"}; {"path": "b.py"}' in item.content and "Did you mean 2 calls?" in item.content
    assert [e.kind for e in batch.events] == [RepairKind.BAD_ARGUMENTS]


@pytest.mark.parametrize("written", ["read_fileread_file", "read_file read_file", "read_fileread_fileread_file"])
def test_a_tool_name_repeated_by_a_stall_is_that_tool(written: str) -> None:
    batch = prepare(message((written, '{"path": "a.py"}')), "tool_calls")
    assert batch.items == (RepairedCall("call_00", "read_file", {"path": "a.py"}, (RepairKind.STALL,)),)
    assert batch.events[0].kind == RepairKind.STALL and written in batch.events[0].detail


def test_two_different_names_run_together_get_a_did_you_mean() -> None:
    batch = prepare(message(("read_filebash", '{"path": "a.py"}')), "tool_calls")
    (item,) = batch.items
    assert isinstance(item, ImmediateResult)
    assert "did you mean 2 calls, 'read_file', then 'bash'" in item.content
    assert [e.kind for e in batch.events] == [RepairKind.UNKNOWN_TOOL]


def test_a_repeated_name_in_text_is_that_tool_too() -> None:
    reasoning = 'so I should call {"name": "list_dirlist_dir", "arguments": {"path": "."}} first'
    batch = prepare(message(reasoning=reasoning))
    assert [(c.name, c.args, c.repairs) for c in batch.scavenged] == [
        ("list_dir", {"path": "."}, (RepairKind.SCAVENGE, RepairKind.STALL))
    ]


# ------------------------------------------------------------------------------------------------- 5. the cap

MANY = (
    "Several files could matter. I could call "
    + ", or ".join(json.dumps({"name": "read_file", "arguments": {"path": f"pkg/mod{i}.py"}}) for i in range(6))
    + "."
)


def test_at_most_three_calls_are_taken_from_one_reply_and_the_rest_are_answered() -> None:
    batch = prepare(message(reasoning=MANY))
    assert [c.args["path"] for c in batch.scavenged] == ["pkg/mod0.py", "pkg/mod1.py", "pkg/mod2.py"]
    assert len(batch.scavenged_results) == 3
    assert all("Not run: at most 3 calls" in r.content for r in batch.scavenged_results)
    assert any("3 more calls written in reasoning not run" in e.detail for e in batch.events)


def test_the_cap_is_configurable() -> None:
    assert len(prepare(message(reasoning=MANY), max_scavenged=1).scavenged) == 1
    assert len(prepare(message(reasoning=MANY), max_scavenged=6).scavenged) == 6


def test_invalid_candidates_do_not_use_up_the_cap() -> None:
    bad = json.dumps({"name": "read_file", "arguments": {"file": "x"}})
    good = json.dumps({"name": "read_file", "arguments": {"path": "y"}})
    reasoning = f"maybe {bad}; or {bad.replace('x', 'z')}; then {good}"
    assert [c.args for c in prepare(message(reasoning=reasoning), max_scavenged=1).scavenged] == [{"path": "y"}]


# ------------------------------------------------------------------------------------------ 6. polling tools


def test_a_storm_exempt_tool_is_never_suppressed() -> None:
    guard = StormGuard()
    for _ in range(8):
        batch = prepare(message(("job_output", '{"job_id": "j1"}')), "tool_calls", storm=guard)
        assert isinstance(batch.items[0], RepairedCall) and batch.events == ()
    assert guard.storms == 0


def test_exempt_calls_do_not_count_toward_a_storm_of_the_others() -> None:
    guard = StormGuard()
    poll, run = ("job_output", '{"job_id": "j1"}'), ("bash", '{"command": "make"}')
    kinds = []
    for pair in (run, poll, poll, poll, run, poll, poll, poll, run):
        item = prepare(message(pair), "tool_calls", storm=guard).items[0]
        kinds.append(f"{pair[0]}:{type(item).__name__}")
    # eight calls between the first and third `make`, but the six polls are not in the window: still a storm
    assert kinds[-1] == "bash:ImmediateResult" and kinds.count("job_output:RepairedCall") == 6
    assert guard.storms == 1 and not guard.turn_ended  # the polls never made a storm of their own


# ------------------------------------------------------------------------------------ 7. DSML string parameters


def test_dsml_string_bodies_are_trimmed_for_paths_and_verbatim_for_content() -> None:
    content = (
        "<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="write_file">\n'
        '<｜DSML｜parameter name="path" string="true">\nsrc/greet.py\n</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="content" string="true">\ndef greet():\n    return "hi"\n</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n"
        "</｜DSML｜function_calls>"
    )
    assert taken(content=content) == [
        ("write_file", {"path": "src/greet.py", "content": '\ndef greet():\n    return "hi"\n'})
    ]


def test_dsml_edit_text_stays_verbatim_and_an_identifier_is_trimmed() -> None:
    content = (
        '<｜DSML｜invoke name="grep">'
        '<｜DSML｜parameter name="pattern" string="true"> def total</｜DSML｜parameter>'
        '<｜DSML｜parameter name="path" string="true">\n  src/\n</｜DSML｜parameter>'
        '<｜DSML｜parameter name="ignore_case" string="false">true</｜DSML｜parameter>'
        "</｜DSML｜invoke>"
    )
    assert taken(content=content) == [("grep", {"pattern": " def total", "path": "src/", "ignore_case": True})]


# ---------------------------------------------------------------------------------- what is re-sent never changes


def test_repairs_never_change_the_bytes_of_the_message() -> None:
    for msg in (
        message(("read_fileread_file", '{"path": "a"}{"path": "a"}'), reasoning="r"),
        message(reasoning=MANY),
        message(content=LOOSE_CALLS[1][0]),
    ):
        before = encode_message(msg)
        prepare(msg, "tool_calls" if msg.tool_calls else "stop")
        assert encode_message(msg) == before


def test_a_looping_model_with_many_unclosed_objects_in_prose_still_yields_the_real_call() -> None:
    loop = '{"name": "bash", "arguments": {"command": "ls' * 2000
    reasoning = loop + ' so I should call {"name": "read_file", "arguments": {"path": "a.py",}} now'
    assert taken(reasoning) == [("read_file", {"path": "a.py"})]  # loose: found by the (memoized) brace scan
    # unclosed smart-quoted strings exhaust the scan budget: loose objects after them are no longer looked for,
    # strict ones still are
    smart = "{“a”: “b " * 2000
    assert taken(smart + ' so I should call {"name": "read_file", "arguments": {"path": "a.py"}} now') == [
        ("read_file", {"path": "a.py"})
    ]
