"""The terminal and JSON-lines renderers, byte for byte on a buffer."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from orchestrator.ui.stream import JsonLinesRenderer, TerminalRenderer, cost_style, footer, summary_line
from sessions.accounting.diagnostics import RequestDiagnostics
from sessions.events import (
    Compacted,
    DiagnosticsReported,
    RepairApplied,
    RequestStarted,
    SessionEvent,
    StreamUpdate,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageReported,
)
from sessions.wire.messages import Usage
from sessions.wire.stream import (
    ContentDelta,
    KeepAlive,
    ReasoningDelta,
    StreamEvent,
    StreamRestarted,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)

S = "executor"


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=100, force_terminal=False, color_system=None), buffer


def _render(events: list[SessionEvent]) -> str:
    console, buffer = _console()
    renderer = TerminalRenderer(console)
    for event in events:
        renderer(event)
    renderer.end_line()
    return buffer.getvalue()


def _s(event: StreamEvent) -> StreamUpdate:
    return StreamUpdate(session=S, event=event)


def _request(i: int) -> RequestStarted:
    return RequestStarted(
        session=S, request_index=i, model="deepseek-v4-flash", body_bytes=1000, prefix_fingerprint="f", messages=2
    )


def _usage(cost: float, session_cost: float, hit: int = 0, prompt: int = 1000) -> UsageReported:
    usage = Usage(prompt_tokens=prompt, prompt_cache_hit_tokens=hit, prompt_cache_miss_tokens=prompt - hit)
    return UsageReported(
        session=S, model="deepseek-v4-flash", usage=usage, cost_usd=cost, session_cost_usd=session_cost
    )


def _diag(i: int, cumulative: float, *, reason: str | None = None, unexplained: bool = False) -> DiagnosticsReported:
    return DiagnosticsReported(
        session=S,
        diagnostics=RequestDiagnostics(
            request_index=i,
            model="deepseek-v4-flash",
            prefix_fingerprint="f",
            log_epoch=0,
            prefix_changed=reason is not None,
            change_reason=reason,
            prompt_tokens=1000,
            hit_tokens=896,
            miss_tokens=104,
            completion_tokens=50,
            hit_ratio=0.896,
            cumulative_hit_ratio=cumulative,
            expected_hit_tokens=1024 if unexplained else 0,
            unexplained_miss=unexplained,
        ),
    )


def test_a_turn_with_reasoning_text_tools_and_footers() -> None:
    events: list[SessionEvent] = [
        _request(1),
        _s(KeepAlive()),
        _s(ReasoningDelta(text="Read the ")),
        _s(ReasoningDelta(text="file [first].")),
        _s(ToolCallStarted(index=0, id="c1", name="read_file")),
        _s(ToolCallArgumentsDelta(index=0, text='{"path": "app.py"}')),
        _usage(0.0012, 0.0012),
        _diag(1, 0.0, reason="first request of the session"),
        ToolStarted(session=S, call_id="c1", name="read_file", args_preview='{"path": "app.py"}'),
        ToolFinished(session=S, call_id="c1", name="read_file", is_error=False, preview="def add", chars=7),
        _request(2),
        _s(ReasoningDelta(text="It subtracts.")),
        _s(ContentDelta(text="add() ")),
        _s(ContentDelta(text="subtracts.")),
        _usage(0.0003, 0.0015, hit=896),
        _diag(2, 0.448),
        TurnFinished(session=S, status="done", text="add() subtracts.", requests=2, failures=0, cost_usd=0.0015),
    ]
    assert _render(events) == (
        "Read the file [first].\n"
        "turn $0.0012 · session $0.0012 · cache 0.0%\n"
        "▸ read_file app.py · ok\n"
        "It subtracts.\n"
        "add() subtracts.\n"
        "turn $0.0015 · session $0.0015 · cache 44.8%\n"
    )


def test_tool_errors_repairs_long_args_and_parallel_calls() -> None:
    long_args = json.dumps({"command": "python -m pytest -q tests/test_a_very_long_name_for_a_test_module.py"})
    events: list[SessionEvent] = [
        RepairApplied(session=S, repair="unknown_tool", call_id="c0", tool="weather", detail="unknown tool 'weather'"),
        ToolFinished(
            session=S,
            call_id="c0",
            name="weather",
            is_error=True,
            preview="Error: there is no tool named 'weather'. Valid tool names: bash, edit_file, glob, grep, list_dir",
            chars=120,
        ),
        ToolStarted(session=S, call_id="c1", name="bash", args_preview=long_args),
        ToolStarted(session=S, call_id="c2", name="glob", args_preview='{"pattern": "*.py"}'),
        ToolFinished(session=S, call_id="c1", name="bash", is_error=False, preview="ok", chars=2),
        ToolFinished(session=S, call_id="c2", name="glob", is_error=False, preview="a.py", chars=4),
    ]
    assert _render(events) == (
        "⚠ repair unknown_tool on weather: unknown tool 'weather'\n"
        # the whole reason, not cut at 80 columns (issue 23 item 5): the terminal wraps it
        "▸ weather · error: Error: there is no tool named 'weather'. Valid tool names: bash, edit_file, glob, grep, "
        "list_dir\n"
        "▸ bash python -m pytest -q tests/test_a_very_long_name_for_a_test_module.py · ok\n"
        "▸ glob *.py · ok\n"
    )


def test_a_restarted_stream_is_marked_void_and_compaction_and_cache_misses_are_shown() -> None:
    events: list[SessionEvent] = [
        _s(ContentDelta(text="half an ans")),
        _s(StreamRestarted(attempt=2, reason="the connection dropped mid-stream", discarded_events=1)),
        _s(ContentDelta(text="A whole answer.")),
        _usage(0.0001, 0.0001),
        _diag(3, 0.9, reason="log rewritten: context passed 80% of the window"),
        Compacted(
            session=S,
            reason="context passed 80%",
            tokens_before=9000,
            messages_before=40,
            messages_after=9,
            digest_chars=300,
        ),
        _diag(4, 0.9, unexplained=True),
        TurnFinished(session=S, status="request_limit", text="", requests=4, failures=0, cost_usd=0.0001),
    ]
    assert _render(events) == (
        "half an ans\n"
        "↻ attempt 2 (the connection dropped mid-stream): the partial reply above is void\n"
        "A whole answer.\n"
        "cache: log rewritten: context passed 80% of the window\n"
        "turn $0.0001 · session $0.0001 · cache 90.0%\n"
        "⋯ compacted 40 → 9 messages: context passed 80%\n"
        "✗ unexplained cache miss: 896 of an expected 1024 tokens hit\n"
        "turn $0.0001 · session $0.0001 · cache 90.0%\n"
        "■ turn ended: request_limit after 4 requests\n"
    )


def test_turn_cost_restarts_each_turn_while_the_session_cost_accumulates() -> None:
    events: list[SessionEvent] = [
        _usage(0.01, 0.01),
        _diag(1, 0.0, reason="first request of the session"),
        TurnFinished(session=S, status="done", text="", requests=1, failures=0, cost_usd=0.01),
        _usage(0.02, 0.03),
        _diag(2, 0.5),
    ]
    lines = _render(events).splitlines()
    assert lines == ["turn $0.0100 · session $0.0100 · cache 0.0%", "turn $0.0200 · session $0.0300 · cache 50.0%"]


@pytest.mark.parametrize(
    ("usd", "scale", "style"),
    [
        (0.0, 1, "green"),
        (0.0499, 1, "green"),
        (0.05, 1, "yellow"),
        (0.1999, 1, "yellow"),
        (0.2, 1, "red"),
        (0.4999, 10, "green"),
        (0.5, 10, "yellow"),
        (1.99, 10, "yellow"),
        (2.0, 10, "red"),
    ],
)
def test_cost_colours(usd: float, scale: int, style: str) -> None:
    assert cost_style(usd, scale) == style


def test_footer_colours_turn_and_session_by_their_own_thresholds() -> None:
    text = footer(0.06, 0.3, 0.991)
    assert text.plain == "turn $0.0600 · session $0.3000 · cache 99.1%"
    styles = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    assert styles["$0.0600"] == "yellow" and styles["$0.3000"] == "green"
    assert summary_line("done", 4, 2.5, 0.5).plain == "done · 4 requests · session $2.5000 · cache 50.0%"


def test_reasoning_is_dimmed_on_a_colour_terminal() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=True, color_system="standard")
    renderer = TerminalRenderer(console, markdown=False)  # markdown has its tests in test_safe_text and the pty ones
    renderer(_s(ReasoningDelta(text="think")))
    renderer(_s(ContentDelta(text="say")))
    renderer.end_line()
    assert buffer.getvalue() == "\x1b[2mthink\x1b[0m\nsay\n"


def test_json_lines_renderer_writes_one_object_per_event() -> None:
    buffer = io.StringIO()
    renderer = JsonLinesRenderer(buffer)
    events: list[SessionEvent] = [
        _request(1),
        _s(ContentDelta(text="héllo")),
        ToolFinished(session=S, call_id="c1", name="bash", is_error=False, preview="ok", chars=2),
    ]
    for event in events:
        renderer(event)
    renderer.write({"kind": "summary", "status": "done"})
    assert buffer.getvalue() == (
        '{"session": "executor", "kind": "request_started", "request_index": 1, "model": "deepseek-v4-flash", '
        '"body_bytes": 1000, "prefix_fingerprint": "f", "messages": 2}\n'
        '{"session": "executor", "kind": "stream", "event": {"kind": "content_delta", "text": "héllo"}}\n'
        '{"session": "executor", "kind": "tool_finished", "call_id": "c1", "name": "bash", "is_error": false, '
        '"preview": "ok", "chars": 2, "bounded": false, "tail": "", "lines": 0}\n'
        '{"kind": "summary", "status": "done"}\n'
    )
    assert [json.loads(line) for line in buffer.getvalue().splitlines()][:3] == [
        e.model_dump(mode="json") for e in events
    ]
