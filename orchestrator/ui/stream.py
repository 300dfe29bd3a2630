"""Showing session events: on a terminal (rich), or as JSON lines for ``--json``.

Both renderers are plain callables ``(SessionEvent) -> None``, so either can be a session's ``on_event``. They keep
only what display needs (the open line, the turn's running cost per session); the session remains the truth.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from orchestrator.ui.wording import counted
from orchestrator.ui.wording import shorten as _short
from sessions.events import (
    Compacted,
    DiagnosticsReported,
    RepairApplied,
    SessionEvent,
    StreamUpdate,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageReported,
)
from sessions.stream import ContentDelta, ReasoningDelta, StreamRestarted

TURN_GREEN_BELOW = 0.05
TURN_YELLOW_BELOW = 0.20
SESSION_SCALE = 10
ARGS_LIMIT = 60
ERROR_LIMIT = 80


def cost_style(usd: float, scale: float = 1) -> str:
    """Green below $0.05, yellow below $0.20, red above (the thresholds times ``scale``)."""
    if usd < TURN_GREEN_BELOW * scale:
        return "green"
    if usd < TURN_YELLOW_BELOW * scale:
        return "yellow"
    return "red"


def footer(turn_usd: float, session_usd: float, hit_ratio: float) -> Text:
    """``turn $0.0012 · session $0.0345 · cache 99.1%``, each cost coloured by its size."""
    text = Text()
    text.append("turn ", style="dim")
    text.append(f"${turn_usd:.4f}", style=cost_style(turn_usd))
    text.append(" · session ", style="dim")
    text.append(f"${session_usd:.4f}", style=cost_style(session_usd, SESSION_SCALE))
    text.append(" · cache ", style="dim")
    text.append(f"{hit_ratio * 100:.1f}%", style="cyan")
    return text


def summary_line(status: str, requests: int, session_usd: float, hit_ratio: float) -> Text:
    """``done · 4 requests · session $0.0345 · cache 99.1%``: the last line of a run on the terminal."""
    text = Text()
    text.append(status, style="bold green" if status == "done" else "bold yellow")
    text.append(f" · {counted(requests, 'request')} · session ", style="dim")
    text.append(f"${session_usd:.4f}", style=cost_style(session_usd, SESSION_SCALE))
    text.append(" · cache ", style="dim")
    text.append(f"{hit_ratio * 100:.1f}%", style="cyan")
    return text


class TerminalRenderer:
    """Streams reasoning (dimmed) and content as they arrive; one line per tool call, repair, compaction, restart;
    a cost and cache footer after every request."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._at_line_start = True
        self._mode: str | None = None
        self._turn_cost: dict[str, float] = {}
        self._session_cost: dict[str, float] = {}
        self._args: dict[str, str] = {}

    # ------------------------------------------------------------------------------------------------ output

    def _write(self, text: str, style: str | None, mode: str) -> None:
        if not text:
            return
        if self._mode != mode and not self._at_line_start:
            self.console.out("", end="\n")
            self._at_line_start = True
        self._mode = mode
        self.console.out(text, style=style, highlight=False, end="")
        self._at_line_start = text.endswith("\n")

    def end_line(self) -> None:
        """Close a partly written line (call before printing anything else to the same console)."""
        if not self._at_line_start:
            self.console.out("", end="\n")
            self._at_line_start = True
        self._mode = None

    def line(self, text: Text) -> None:
        self.end_line()
        self.console.print(text, soft_wrap=True, highlight=False)

    # ------------------------------------------------------------------------------------------------ events

    def __call__(self, event: SessionEvent) -> None:
        if isinstance(event, StreamUpdate):
            self._stream(event)
        elif isinstance(event, UsageReported):
            self._turn_cost[event.session] = self._turn_cost.get(event.session, 0.0) + event.cost_usd
            self._session_cost[event.session] = event.session_cost_usd
        elif isinstance(event, DiagnosticsReported):
            self._diagnostics(event)
        elif isinstance(event, ToolStarted):
            self._args[event.call_id] = event.args_preview
        elif isinstance(event, ToolFinished):
            self._tool(event)
        elif isinstance(event, RepairApplied):
            self.line(Text(f"⚠ repair {event.repair} on {event.tool}: {_short(event.detail, 100)}", style="yellow"))
        elif isinstance(event, Compacted):
            self.line(
                Text(
                    f"⋯ compacted {event.messages_before} → {event.messages_after} messages: {event.reason}",
                    style="magenta",
                )
            )
        elif isinstance(event, TurnFinished):
            self._turn_cost[event.session] = 0.0
            if event.status != "done":
                self.line(
                    Text(f"■ turn ended: {event.status} after {counted(event.requests, 'request')}", style="yellow")
                )
            else:
                self.end_line()

    def _stream(self, update: StreamUpdate) -> None:
        event = update.event
        if isinstance(event, ReasoningDelta):
            self._write(event.text, "dim", "reasoning")
        elif isinstance(event, ContentDelta):
            self._write(event.text, None, "content")
        elif isinstance(event, StreamRestarted):
            self.line(
                Text(
                    f"↻ attempt {event.attempt} ({_short(event.reason, 80)}): the partial reply above is void",
                    style="yellow",
                )
            )

    def _diagnostics(self, event: DiagnosticsReported) -> None:
        d = event.diagnostics
        if d.unexplained_miss:
            self.line(
                Text(
                    f"✗ unexplained cache miss: {d.hit_tokens} of an expected {d.expected_hit_tokens} tokens hit",
                    style="red",
                )
            )
        elif d.change_reason is not None and d.request_index > 1:
            self.line(Text(f"cache: {d.change_reason}", style="yellow"))
        turn = self._turn_cost.get(event.session, 0.0)
        session = self._session_cost.get(event.session, 0.0)
        self.line(footer(turn, session, d.cumulative_hit_ratio))

    def _tool(self, event: ToolFinished) -> None:
        text = Text("▸ ")
        text.append(event.name, style="bold")
        args = self._args.pop(event.call_id, None)
        if args is not None:
            text.append(f" {_short(args, ARGS_LIMIT)}")
        if event.is_error:
            text.append(" · error: ", style="red")
            text.append(_short(event.preview, ERROR_LIMIT), style="red")
        else:
            text.append(" · ok", style="green")
        self.line(text)


class JsonLinesRenderer:
    """One JSON object per event (``event.model_dump(mode="json")``), one per line, flushed as it goes."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: SessionEvent) -> None:
        self.write(event.model_dump(mode="json"))

    def write(self, obj: Mapping[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()
