"""Property: whatever the model writes, repair never yields a call whose tool is not offered or whose arguments do
not validate against that tool (after nesting and the usual coercion), and never more than the cap from one text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sessions.repair import RepairedCall, StormGuard, unflatten_args
from sessions.repair.stall import repeated_name, repeated_object
from tests.sessions.repair.examples import examples
from tests.sessions.repair.support import FLATMAPS, REGISTRY, message, prepare

NAMES = [*FLATMAPS, "read_fileread_file", "web_search", "bash bash", "read_filebash", "Read_File", ""]
values = st.none() | st.booleans() | st.integers(-3, 500) | st.sampled_from(["a.py", "src", ".", "ls", "", " x\n"])
keys = st.sampled_from(["path", "content", "command", "pattern", "start_line", "job_id", "file", "edits", "glob"])
arguments = st.dictionaries(keys, values, max_size=3)
VALID: dict[str, dict[str, Any]] = {
    "read_file": {"path": "a.py", "start_line": 2},
    "write_file": {"path": "a.py", "content": "x = 1\n"},
    "edit_file": {"path": "a.py", "edits": [{"old": "x", "new": "y"}]},
    "list_dir": {"path": "."},
    "glob": {"pattern": "*.py"},
    "grep": {"pattern": "def ", "path": "src"},
    "bash": {"command": "ls", "timeout_s": 5},
    "job_output": {"job_id": "j1"},
}


def _loose(text: str, how: str) -> str:
    if how == "trailing_comma":
        return text[:-1] + ",}"
    if how == "python":
        return text.replace("true", "True").replace("null", "None").replace("false", "False")
    if how == "smart":
        return text.replace('"', "“", 1)
    return text


@st.composite
def written_call(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    base = next((tool for tool in VALID if name.startswith(tool)), "bash")
    args = draw(st.just(VALID[base]) | arguments)
    shape = draw(st.sampled_from(["plain", "parameters", "envelope", "envelope_string", "r1"]))
    obj: dict[str, Any]
    if shape == "plain":
        obj = {"name": name, "arguments": args}
    elif shape == "parameters":
        obj = {"name": name, "parameters": args}
    elif shape == "envelope":
        obj = {"type": "function", "function": {"name": name, "arguments": args}}
    elif shape == "envelope_string":
        obj = {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    else:
        obj = {"tool_name": name, "tool_args": args}
    text = _loose(json.dumps(obj, ensure_ascii=False), draw(st.sampled_from(["", "trailing_comma", "python", "smart"])))
    wrap = draw(st.sampled_from(["prose", "fence", "python_fence", "quoted", "backticks", "example", "negated"]))
    return {
        "prose": "so I should call {} to check",
        "fence": "Next:\n```json\n{}\n```\n",
        "python_fence": "```python\nCALL = {}\n```",
        "quoted": "the docs show '{}' as the format",
        "backticks": "the log line was `{}` earlier",
        "example": "For example, {} would do it.",
        "negated": "I won't call {} yet",
    }[wrap].replace("{}", text)


texts = st.lists(written_call() | st.text(max_size=20), max_size=7).map(" ".join)


def _validates(name: str, args: dict[str, Any]) -> bool:
    tool = REGISTRY.get(name)
    if tool is None:
        return False
    try:
        tool.args_model.model_validate(unflatten_args(args, FLATMAPS[name]))
    except ValidationError:
        return False
    return True


@settings(max_examples=examples(300), deadline=None)
@given(content=st.none() | texts, reasoning=st.none() | texts, cap=st.integers(0, 4))
def test_a_call_taken_from_text_is_always_offered_and_valid_unless_written_as_a_call(
    content: str | None, reasoning: str | None, cap: int
) -> None:
    """A call taken from prose validates; one written as markup or a fenced object may not: the dispatcher answers
    its bad arguments as for a native call (issue 44)."""
    batch = prepare(message(content=content, reasoning=reasoning), max_scavenged=cap)
    assert len(batch.scavenged) <= cap
    shapes = {e.call_id: e.detail for e in batch.events if e.kind == "scavenge"}
    for call in batch.scavenged:
        assert call.name in FLATMAPS and call.name in REGISTRY
        assert _validates(call.name, call.args) or "prose_json" not in shapes[call.id], (call.name, call.args)


raw_args = st.builds(lambda a, n: json.dumps(a) * n, arguments, st.integers(1, 3)) | st.text(max_size=30)


@settings(max_examples=examples(300), deadline=None)
@given(calls=st.lists(st.tuples(st.sampled_from(NAMES), raw_args), max_size=5))
def test_a_real_call_never_runs_under_a_name_that_is_not_offered(calls: list[tuple[str, str]]) -> None:
    batch = prepare(message(*calls), "tool_calls", storm=StormGuard())
    assert len(batch.items) == len(calls)
    for item in batch.items:
        if isinstance(item, RepairedCall):
            assert item.name in FLATMAPS and isinstance(item.args, dict)


json_objects = st.dictionaries(st.text(max_size=6), st.none() | st.booleans() | st.integers() | st.text(max_size=8))


@settings(max_examples=examples(200), deadline=None)
@given(obj=json_objects, copies=st.integers(2, 4), sep=st.sampled_from(["", "\n", " ", ", "]), cut=st.integers(0, 30))
def test_an_object_written_several_times_is_that_object_once(
    obj: dict[str, Any], copies: int, sep: str, cut: int
) -> None:
    text = json.dumps(obj, ensure_ascii=False)
    raw = sep.join([text] * copies) + sep + text[: min(cut, len(text) - 1)]
    assert repeated_object(raw) == (obj, copies + (1 if min(cut, len(text) - 1) > 0 else 0))


@settings(max_examples=examples(200), deadline=None)
@given(name=st.sampled_from(sorted(FLATMAPS)), copies=st.integers(2, 4), sep=st.sampled_from(["", " "]))
def test_a_name_written_several_times_is_that_name(name: str, copies: int, sep: str) -> None:
    assert repeated_name(sep.join([name] * copies), FLATMAPS) == name
    assert repeated_name(name, FLATMAPS) is None
