"""One goal-event vocabulary (``orchestrator.events``), three renderings: every kind of goal event has a line in the
terminal's goal view, in ``reasonix runs show`` and in the dashboard, and the dashboard listens for the kinds the
service lists from the event models. A new event class without a rendering in any of them fails here."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import types
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel
from rich.console import Console

from orchestrator.cli.commands.runs import _event_line
from orchestrator.events import (
    GOAL_EVENT_KINDS,
    GOAL_EVENT_TYPES,
    SESSION_EVENT_KINDS,
    GoalEventBase,
    SubagentFinished,
    event_kind,
)
from orchestrator.serve.models import SERVICE_EVENT_KINDS
from orchestrator.ui.goal_event_lines import GOAL_EVENT_LINES
from orchestrator.ui.goal_view import GoalTerminalUI
from tests.support.parts import require

JS = files("orchestrator.serve") / "static" / "js"


def _value(annotation: Any) -> Any:
    """A plausible value of a field's type, for an event built from its fields alone."""
    origin = get_origin(annotation)
    if origin is Literal:
        return get_args(annotation)[0]
    if origin in (Union, types.UnionType):
        return _value(next(a for a in get_args(annotation) if a is not type(None)))
    if origin is tuple:
        return (_value(get_args(annotation)[0]),)
    if origin in (list, set):
        return [_value(get_args(annotation)[0])]
    if origin is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return sample(annotation)
    return {str: "S1", int: 2, float: 0.5, bool: False}[annotation]


def sample(cls: type[BaseModel]) -> Any:
    """An instance of ``cls`` with every required field filled from its type."""
    values = {name: _value(f.annotation) for name, f in cls.model_fields.items() if f.is_required()}
    return cls.model_validate(values)


def test_the_kinds_are_read_from_the_event_models_and_are_distinct() -> None:
    assert len(GOAL_EVENT_TYPES) >= 15 and all(issubclass(c, GoalEventBase) for c in GOAL_EVENT_TYPES)
    assert tuple(event_kind(c) for c in GOAL_EVENT_TYPES) == GOAL_EVENT_KINDS
    every = [*GOAL_EVENT_KINDS, *SESSION_EVENT_KINDS, *SERVICE_EVENT_KINDS]
    assert len(every) == len(set(every))
    assert {"goal_state", "wave_started", "goal_finished"} <= set(GOAL_EVENT_KINDS)
    assert {"tool_started", "stream", "usage"} <= set(SESSION_EVENT_KINDS)


def test_every_goal_event_has_a_line_in_the_terminal_goal_view() -> None:
    assert set(GOAL_EVENT_LINES) == set(GOAL_EVENT_TYPES)
    for cls in GOAL_EVENT_TYPES:
        out = io.StringIO()
        ui = GoalTerminalUI(Console(file=out, width=100, color_system=None), live=False, tick=False)
        ui(sample(cls))  # renders without failing
        ui.stop()
        if cls.__name__ != "GoalFinished":  # (the state line before it says how the goal ended)
            assert out.getvalue().strip(), cls.__name__


def test_every_goal_event_has_a_line_in_runs_show() -> None:
    for cls in GOAL_EVENT_TYPES:
        line = _event_line(sample(cls).model_dump(mode="json"))
        assert line, cls.__name__


def _renderer_keys(module: str, table: str) -> set[str]:
    """The keys of ``export const TABLE = { key(view, e, id) {…}, … };`` in a dashboard module."""
    text = (JS / module).read_text(encoding="utf-8")
    body = re.search(rf"^export const {table} = \{{\n(.*?)^\}};", text, re.MULTILINE | re.DOTALL)
    assert body, (module, table)
    return set(re.findall(r"^  ([a-z_]+)\([^)]*\) \{", body.group(1), re.MULTILINE))


def test_every_kind_the_stream_carries_has_a_renderer_in_the_dashboard() -> None:
    assert _renderer_keys("goal_events.js", "GOAL_EVENTS") == set(GOAL_EVENT_KINDS)
    assert _renderer_keys("session_events.js", "SESSION_EVENTS") == set(SESSION_EVENT_KINDS)
    assert _renderer_keys("session_events.js", "SERVICE_EVENTS") == set(SERVICE_EVENT_KINDS)


def test_the_dashboard_keeps_no_list_of_kinds_of_its_own() -> None:
    for path in JS.iterdir():
        text = path.read_text(encoding="utf-8")
        # a hand list would be an array of kind names: any three of them quoted side by side
        assert not re.search(r"'goal_state',\s*'plan_proposed'", text), path.name
    assert "api('/api/event-kinds')" in (JS / "stream.js").read_text(encoding="utf-8")


_NODE_HARNESS = """
globalThis.location = { search: '', href: 'http://127.0.0.1/', pathname: '/' };
globalThis.sessionStorage = { getItem() { return null; }, setItem() {}, removeItem() {} };
globalThis.history = { replaceState() {} };
globalThis.document = { getElementById() { return null; }, addEventListener() {} };
const { GOAL_EVENTS } = await import(process.argv[2]);
const logged = [];
const view = { log: (id, text) => logged.push(text), brief: (text) => text };
GOAL_EVENTS[process.argv[3]](view, JSON.parse(process.argv[4]), 1);
console.log(JSON.stringify(logged));
"""


def _dashboard_lines(tmp_path: Path, event: GoalEventBase) -> list[str]:
    """What the dashboard's renderer of ``event`` logs, run by node on the page's own module."""
    require("node")
    node = shutil.which("node")
    assert node is not None
    harness = tmp_path / "harness.mjs"
    harness.write_text(_NODE_HARNESS, encoding="utf-8")
    module = Path(str(JS / "goal_events.js")).as_uri()
    argv = [node, str(harness), module, event_kind(type(event)), event.model_dump_json()]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    lines: list[str] = json.loads(done.stdout)
    return lines


@pytest.mark.node
@pytest.mark.parametrize("ok", [True, False])
def test_a_finished_subagent_reads_the_same_in_the_terminal_runs_show_and_the_dashboard(
    tmp_path: Path, ok: bool
) -> None:
    event = SubagentFinished(
        session="agent:fixer#2",
        profile="fixer",
        ok=ok,
        reason="" if ok else "it used all 5 requests it is allowed",
        read_only=False,
        requests=5,
        cost_usd=0.001234,
        escalations=1,
        cache_hit_tokens=3072,
        cache_miss_tokens=1024,
        merged=("a.py", "b.py") if ok else (),
    )
    words = event.words()
    assert words.startswith(f"subagent agent:fixer#2 (writing) {'done' if ok else 'stopped'} · 5 requests · $0.0012")
    assert "cache 3072 hit / 1024 miss (75%) · 1 escalations" in words
    assert ("merged a.py, b.py" in words) == ok and ("it used all 5 requests" in words) == (not ok)
    out = io.StringIO()
    ui = GoalTerminalUI(Console(file=out, width=300, color_system=None), live=False, tick=False)
    ui(event)
    ui.stop()
    assert words in out.getvalue()
    assert _event_line(event.model_dump(mode="json")) == f"⑂ {words}"
    assert _dashboard_lines(tmp_path, event) == [words]
