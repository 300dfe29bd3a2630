"""Issue 44: what a real model (Qwen2.5-Coder 1.5B under llama.cpp) wrote instead of a native call. Every shape seen
is scavenged: the planner's ``<tools><function name="bash" arguments='{…}'/></tools>``, doubled braces (a format
template's escaping copied), a fenced call object with prose around it. A call in text whose arguments fail
validation is answered with the problem, exactly as a native call, and the turn goes on; the re-sent assistant
message stays as the model wrote it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.emulator import ReplySpec, Script, SessionSpec
from sessions.events import SessionEvent, ToolFinished
from sessions.repair.scavenge import scavenge_calls
from tests.sessions.repair.support import is_append, registry, repair_session
from tests.sessions.session_support import BodyRecorder, emulated

TOOLS = frozenset(tool.name for tool in registry())

#: What the planner wrote (issue 44, "What was seen" 3): not scavenged before, and the goal failed after 3 attempts.
PLANNER_TOOLS_MARKUP = (
    "I need to look at the tests first.\n"
    "<tools>\n"
    '<function name="bash" arguments=\'{"command": "python3 -m unittest -v 2>&1 | tail -n 20"}\'/>\n'
    "</tools>"
)

commands = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60)


def _found(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.args) for c in scavenge_calls(content=text, reasoning=None, known_tools=TOOLS)]


def test_the_planners_tools_markup_is_a_call() -> None:
    calls = scavenge_calls(content=PLANNER_TOOLS_MARKUP, reasoning=None, known_tools=TOOLS)
    assert [(c.name, c.args, c.shape) for c in calls] == [
        ("bash", {"command": "python3 -m unittest -v 2>&1 | tail -n 20"}, "function_attrs")
    ]


def test_function_attributes_in_double_quotes_with_entities_and_an_unknown_tool() -> None:
    assert _found('<function name="read_file" arguments="{&quot;path&quot;: &quot;calc.py&quot;}"></function>') == [
        ("read_file", {"path": "calc.py"})
    ]
    assert _found("<function name='list_dir' arguments='{}'/>") == [("list_dir", {})]
    assert _found('<function name="deploy" arguments=\'{"env": "prod"}\'/>') == []  # not a tool of ours


@settings(max_examples=200, deadline=None)
@given(command=commands.filter(lambda c: "'" not in c), prose=st.sampled_from(["", "Let me check.\n", "ok "]))
def test_any_command_in_function_attributes_is_taken_whole(command: str, prose: str) -> None:
    args = json.dumps({"command": command}, ensure_ascii=False)
    text = f"{prose}<tools><function name=\"bash\" arguments='{args}'/></tools>"
    assert _found(text) == [("bash", {"command": command})]


def _doubled(value: Any) -> str:
    """JSON with every brace outside strings doubled, as a model copying a format template writes it."""
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_doubled(v)}" for k, v in value.items())
        return "{{" + inner + "}}"
    return json.dumps(value, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(
    command=commands,
    wrap=st.sampled_from(["{}", "```json\n{}\n```", "Let me run it: {} now.", "<tool_call>{}</tool_call>"]),
)
def test_doubled_braces_keep_every_character_of_the_arguments(command: str, wrap: str) -> None:
    """json-repair read ``{{…}}`` but lost escapes inside strings (``\\f`` came back as a backslash and an f)."""
    text = wrap.replace("{}", _doubled({"name": "bash", "arguments": {"command": command}}))
    assert _found(text) == [("bash", {"command": command})]


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(st.characters(exclude_characters="`{}<", exclude_categories=("Cs",)), max_size=80),
    after=st.text(st.characters(exclude_characters="`{}<", exclude_categories=("Cs",)), max_size=80),
    path=st.from_regex(r"[a-z][a-z0-9_/]{0,20}\.py", fullmatch=True),
)
def test_a_fenced_call_with_prose_around_it_is_taken(before: str, after: str, path: str) -> None:
    call = json.dumps({"name": "read_file", "arguments": {"path": path}})
    assert _found(f"{before}\n```json\n{call}\n```\n{after}") == [("read_file", {"path": path})]


async def _one_turn(tmp_path: Path, written: str) -> tuple[Any, list[SessionEvent], BodyRecorder]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    replies = (ReplySpec(content=written), ReplySpec(content="I will fix the arguments."))
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    recorder, events = BodyRecorder(), list[SessionEvent]()
    async with emulated(script) as (_emu, client):
        result = await repair_session(client, ws, recorder, events).send("Fix add() in calc.py.")
    return result, events, recorder


async def test_a_written_list_dir_with_an_extra_parameter_is_answered_with_the_problem(tmp_path: Path) -> None:
    written = '```json\n{"name": "list_dir", "arguments": {"path": ".", "pattern": "*.py"}}\n```'
    result, events, recorder = await _one_turn(tmp_path, written)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.name, e.is_error) for e in finished] == [("list_dir", True)]
    assert "invalid arguments for list_dir: pattern: Extra inputs are not permitted" in finished[0].preview
    assert result.requests == 2  # the turn went on: the model heard what was wrong
    assert b"invalid arguments for list_dir: pattern" in recorder.bodies[1]
    assert json.dumps(written)[1:-1].encode() in recorder.bodies[1]  # the reply re-sent as written
    assert is_append(recorder.bodies[0], recorder.bodies[1])


async def test_a_written_edit_with_path_inside_an_edit_item_is_answered_with_the_problem(tmp_path: Path) -> None:
    edit = {"path": "calc.py", "edits": [{"path": "calc.py", "old": "a - b", "new": "a + b"}]}
    written = "Now the fix:\n```json\n" + json.dumps({"name": "edit_file", "arguments": edit}) + "\n```"
    result, events, recorder = await _one_turn(tmp_path, written)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.name, e.is_error) for e in finished] == [("edit_file", True)]
    assert "invalid arguments for edit_file: edits.0.path: Extra inputs are not permitted" in finished[0].preview
    assert result.requests == 2
    assert (tmp_path / "ws" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing ran
    assert is_append(recorder.bodies[0], recorder.bodies[1])


#: The 1.5B planner's first reply on the calc-add goal (bench/local_model.py, recorded 2026-12-07): an empty
#: ``<tools></tools>``, then the call with its opening brace doubled and its closing brace single. Not scavenged
#: before (the planner "never called submit_plan").
PLANNER_DOUBLED_OPENING_BRACE = (
    '<tools></tools>\n{{"name": "submit_plan", "arguments": {"assumptions": [], "non_goals": [],'
    ' "objective": "The unit tests fail: add() in calc.py returns the wrong result. Fix add() s'
    'o that python3 -m unittest passes.", "requires_approval": false, "steps": [\n{"acceptance":'
    ' ["python3 -m unittest passes", "python3 calc.py adds 2 and 3 correctly"], "depends_on": ['
    '"add() in calc.py returns the wrong result"], "id": "1", "instructions": "Add the correct '
    'implementation of add() in calc.py.", "needs_pro": false, "reads": ["calc.py"], "risk": "l'
    'ow", "title": "Fix the add() function", "verify": [\n{"command": "python3 -m unittest", "ex'
    'pect_exit": 0, "timeout_s": 10},\n{"command": "python3 calc.py adds 2 and 3 correctly", "ex'
    'pect_exit": 0, "timeout_s": 10}\n]}]}}'
)


def test_a_doubled_opening_brace_closed_once_is_a_call() -> None:
    calls = scavenge_calls(
        content=PLANNER_DOUBLED_OPENING_BRACE, reasoning=None, known_tools=TOOLS | {"submit_plan", "goal_verdict"}
    )
    ((name, args),) = [(c.name, c.args) for c in calls]
    assert name == "submit_plan"
    assert args["objective"].startswith("The unit tests fail: add() in calc.py")
    assert [step["title"] for step in args["steps"]] == ["Fix the add() function"]
    assert args["steps"][0]["verify"][0] == {"command": "python3 -m unittest", "expect_exit": 0, "timeout_s": 10}
