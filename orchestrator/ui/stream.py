"""Showing session events: on a terminal (rich), or as JSON lines for ``--json``.

Both renderers are plain callables ``(SessionEvent) -> None``, so either can be a session's ``on_event``. They keep
only what display needs (the open line, the turn's running cost per session); the session remains the truth.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from rich.segment import ControlType
from rich.text import Text

from orchestrator.events import SubagentFinished
from orchestrator.text.safe_text import neutralise, neutralise_text
from orchestrator.text.wording import counted
from orchestrator.ui.markdown_blocks import completed, markdown_lines, rows_taken
from orchestrator.ui.spinner import Ticker, WaitIndicator
from orchestrator.ui.tool_lines import short as _short
from orchestrator.ui.tool_lines import tool_line
from sessions import (
    Compacted,
    DiagnosticsReported,
    JournalRecovered,
    RepairApplied,
    RequestStarted,
    SessionEvent,
    StreamUpdate,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageReported,
)
from sessions.wire import ContentDelta, ReasoningDelta, StreamRestarted, ToolCallArgumentsDelta, ToolCallStarted

TURN_STATUS_WORDS = {"length": "cut at the output limit"}
"""How a turn's end status reads on the terminal (``--json`` and the journal keep the status itself)."""
TURN_GREEN_BELOW = 0.05
TURN_YELLOW_BELOW = 0.20
SESSION_SCALE = 10
STALL_S = 1.5
"""A reply that has streamed something and then nothing for this long shows the spinner again, with the time."""
KEPT_OUTPUTS = 20
"""How many command outputs :attr:`TerminalRenderer.outputs` keeps for ``/output``."""


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
    a cost and cache footer after every request (or, with ``footer_per_turn``, once when a turn ends).

    Every text from the model or a tool is neutralised (:mod:`orchestrator.text.safe_text`): its control characters
    are shown, never executed. ``spinner`` (default: on a real terminal) shows ``⠹ waiting for <model> · 2.4s``
    while a request has produced nothing yet, and again when a reply stalls mid-stream (:attr:`waiting` tracks it
    either way). ``clock`` is where the elapsed time comes from; ``tick=False`` leaves the redrawing to whoever calls
    :meth:`tick` (a test) instead of a background thread. ``markdown`` (default: on a real terminal) renders the
    reply's content as markdown, a block at a time as each one completes; without a terminal the text stays raw.

    :attr:`outputs` keeps the latest tool results in full (``/output`` shows them); :meth:`call_args` gives an
    approval prompt the arguments of the call it asks about, and the tool line then leaves out the diff it showed.
    """

    def __init__(
        self,
        console: Console,
        *,
        spinner: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        tick: bool = True,
        markdown: bool | None = None,
        footer_per_turn: bool = False,
    ) -> None:
        self.console = console
        self._footer_per_turn = footer_per_turn
        """The cost footer once, when a turn ends (the conversation, whose status line has the running figures),
        instead of after every request."""
        self._hit_ratio: dict[str, float] = {}
        self._at_line_start = True
        self._mode: str | None = None
        self._turn_cost: dict[str, float] = {}
        self._session_cost: dict[str, float] = {}
        self._turn_over: set[str] = set()
        self._started: dict[str, ToolStarted] = {}
        self._lock = threading.RLock()
        self.waiting = WaitIndicator(clock)
        self._spinner = console.is_terminal if spinner is None else spinner
        self._spinner_drawn = False
        self._ticker = Ticker(self.tick, lambda: self.waiting.waiting) if self._spinner and tick else None
        self._markdown = console.is_terminal if markdown is None else markdown
        self._md_buffer = ""
        self._md_blocks = 0
        self._column = 0
        self._model = ""
        self._previewed: set[str] = set()
        self.outputs: list[tuple[str, str]] = []
        """(tool line as plain text, the whole result) of the latest commands and MCP tool calls, oldest first."""

    # ------------------------------------------------------------------------------------------------ output

    def _write(self, text: str, style: str | None, mode: str) -> None:
        if not text:
            return
        with self._lock:
            self._clear_spinner()
            if self._mode != mode:
                self._flush_markdown()
                if not self._at_line_start:
                    self.console.out("", end="\n")
                    self._at_line_start = True
                self._md_blocks = 0
            self._mode = mode
            if mode == "content" and self._markdown:
                self._md_buffer += text
                self._raw(text, style)
                self._flush_markdown(complete_only=True)
                return
            self._raw(text, style)

    def _raw(self, text: str, style: str | None) -> None:
        shown = neutralise(text)
        self.console.out(shown, style=style, highlight=False, end="")
        self._at_line_start = text.endswith("\n")
        last = shown.rpartition("\n")
        width = max(self.console.width, 1)
        self._column = (cell_len(last[2]) if last[1] else self._column + cell_len(shown)) % width

    def _flush_markdown(self, *, complete_only: bool = False) -> None:
        """Replace the raw text streamed so far with its markdown rendering: every block that a blank line outside a
        code fence has closed, or (``complete_only=False``) all of it; the rest is written raw again. A block taller
        than the screen stays raw (the rows to replace have scrolled away)."""
        buffer = self._md_buffer
        if not buffer:
            return
        cut = completed(buffer) if complete_only else len(buffer)
        if cut < 0:
            return
        block, rest = buffer[:cut], buffer[cut:]
        self._md_buffer = rest if complete_only else ""
        rows = rows_taken(neutralise(buffer), self.console.width)
        if rows >= self.console.height - 1:
            if not complete_only and not self._at_line_start:
                self.console.out("", end="\n")
                self._at_line_start, self._column = True, 0
            return
        self.console.control(Control.move_to_column(0))
        if rows > 1:
            self.console.control(Control.move(0, -(rows - 1)))
        self.console.file.write("\x1b[J")  # erase from here to the end of the screen: the raw text goes
        self._at_line_start, self._column = True, 0
        if block.strip():
            if self._md_blocks:
                self.console.out("", end="\n")
            self.console.print(markdown_lines(self.console, neutralise(block).strip("\n")), end="")
            self._md_blocks += 1
        if complete_only and rest:
            self._raw(rest, None)

    def _close_line(self) -> None:
        self._clear_spinner()
        self._flush_markdown()
        self._md_blocks = 0
        if not self._at_line_start:
            self.console.out("", end="\n")
            self._at_line_start = True
            self._column = 0
        self._mode = None

    def end_line(self) -> None:
        """Close a partly written line and stop any spinner (call before printing anything else to the same
        console)."""
        with self._lock:
            self.waiting.end()
            self._close_line()

    def line(self, text: Text) -> None:
        """Print ``text`` on lines of its own, its control characters made visible."""
        with self._lock:
            self._close_line()
            self.console.print(neutralise_text(text), soft_wrap=True, highlight=False)

    # ------------------------------------------------------------------------------------------------ spinner

    def tick(self) -> None:
        """Redraw the spinner line (from the background thread, or a test)."""
        with self._lock:
            shown = self.waiting.line() if self._spinner else None
            if shown is None:
                self._clear_spinner()
                return
            column = 0 if self._at_line_start else self._column + 2
            room = self.console.width - column - 1
            if room < 12:  # no room left on this line: show nothing rather than wrap
                return
            shown.truncate(room, overflow="ellipsis")
            self.console.control(Control.move_to_column(column))
            self.console.print(shown, end="", soft_wrap=True, highlight=False)
            self.console.control(Control((ControlType.ERASE_IN_LINE, 0)))
            self._spinner_drawn = True

    def _clear_spinner(self) -> None:
        if self._spinner_drawn:
            column = 0 if self._at_line_start else self._column
            erase = Control((ControlType.ERASE_IN_LINE, 0 if column else 2))
            self.console.control(Control.move_to_column(column), erase)
            self._spinner_drawn = False

    def _wait_for(self, event: RequestStarted) -> None:
        self._model = event.model
        self.waiting.begin(f"waiting for {event.model}")  # kept even when not drawn here: a live region shows it
        if self._ticker is not None:
            self._ticker.ensure()

    def _streamed(self) -> None:
        """Something arrived: the spinner goes, and comes back with the time if the stream then stalls."""
        self.waiting.begin(f"{self._model or 'the model'} is quiet", show_after_s=STALL_S)
        if self._ticker is not None:
            self._ticker.ensure()

    # ------------------------------------------------------------------------------------------------ approvals

    def call_args(self, tool: str, subject: str) -> dict[str, Any] | None:
        """The full arguments of the started, unfinished ``tool`` call on path ``subject`` (what an approval prompt
        asks about), which is then marked: its tool line leaves out the diff the prompt showed. Stops the spinner
        and closes the open line, since the prompt is printed next."""
        with self._lock:
            self.end_line()
            for call_id, started in self._started.items():
                if started.name == tool and started.args.get("path") == subject and call_id not in self._previewed:
                    self._previewed.add(call_id)
                    return dict(started.args)
            return None

    # ------------------------------------------------------------------------------------------------ events

    def __call__(self, event: SessionEvent | SubagentFinished) -> None:
        with self._lock:
            if isinstance(event, SubagentFinished):  # the one goal event a task tool sends a plain run
                self._close_line()
                style = "cyan" if event.ok else "yellow"
                self.console.print(Text(neutralise(event.words()), style=style), soft_wrap=True, highlight=False)
                return
            self._handle(event)

    def _handle(self, event: SessionEvent) -> None:
        if isinstance(event, RequestStarted):
            self._wait_for(event)
        elif isinstance(event, StreamUpdate):
            self._stream(event)
        elif isinstance(event, UsageReported):
            self.waiting.end()
            self._clear_spinner()
            if event.session in self._turn_over:  # the footer shows a finished turn's cost until the next one spends
                self._turn_over.discard(event.session)
                self._turn_cost[event.session] = 0.0
            self._turn_cost[event.session] = self._turn_cost.get(event.session, 0.0) + event.cost_usd
            self._session_cost[event.session] = event.session_cost_usd
        elif isinstance(event, DiagnosticsReported):
            self._diagnostics(event)
        elif isinstance(event, ToolStarted):
            self._started[event.call_id] = event
        elif isinstance(event, ToolFinished):
            self._tool(event)
        elif isinstance(event, JournalRecovered):
            self.line(Text(f"⚠ {event.message}", style="yellow"))
        elif isinstance(event, RepairApplied):
            self.line(Text(f"⚠ repair {event.repair} on {event.tool}: {_short(event.detail, 100)}", style="yellow"))
        elif isinstance(event, Compacted):
            tiered = event.reason.startswith(("snip:", "force:"))  # a tier that rewrote results in place (§3.6)
            moved = f"compacted {event.messages_before} → {event.messages_after} messages: "
            said = event.reason if tiered else moved + event.reason
            self.line(Text(f"⋯ {said}", style="magenta"))
        elif isinstance(event, TurnFinished):
            self._turn_over.add(event.session)
            self.waiting.end()
            if event.status != "done":
                said = TURN_STATUS_WORDS.get(event.status, event.status)
                self.line(Text(f"■ turn ended: {said} after {counted(event.requests, 'request')}", style="yellow"))
            else:
                self._close_line()
            if self._footer_per_turn and event.requests:
                self._footer(event.session)

    def _stream(self, update: StreamUpdate) -> None:
        event = update.event
        if isinstance(event, ReasoningDelta | ContentDelta | ToolCallStarted | ToolCallArgumentsDelta):
            self._streamed()
        if isinstance(event, ReasoningDelta):
            self._write(event.text, "dim", "reasoning")
        elif isinstance(event, ContentDelta):
            self._write(event.text, None, "content")
        elif isinstance(event, StreamRestarted):
            void = ": the partial reply above is void" if event.discarded_events else ""
            self.line(Text(f"↻ attempt {event.attempt} ({_short(event.reason, 100)}){void}", style="yellow"))
        elif not self.waiting.waiting:
            self._clear_spinner()

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
        self._hit_ratio[event.session] = d.cumulative_hit_ratio
        if not self._footer_per_turn:
            self._footer(event.session)

    def _footer(self, session: str) -> None:
        turn = self._turn_cost.get(session, 0.0)
        spent = self._session_cost.get(session, 0.0)
        self.line(_tagged(session, footer(turn, spent, self._hit_ratio.get(session, 0.0))))

    def _tool(self, event: ToolFinished) -> None:
        started = self._started.pop(event.call_id, None)
        previewed = event.call_id in self._previewed
        self._previewed.discard(event.call_id)
        shown = tool_line(
            event.name,
            (started.args or None) if started is not None else None,
            is_error=event.is_error,
            result_preview=event.preview,
            args_preview=started.args_preview if started is not None else None,
            output=event.text or None,
            diff=not previewed,
        )
        self.line(_tagged(event.session, shown))
        if event.text and (event.name == "bash" or event.name.startswith("mcp__")):
            self.outputs.append((shown.plain.split("\n", 1)[0], event.text))
            del self.outputs[:-KEPT_OUTPUTS]


def _tagged(session: str, line: Text) -> Text:
    """A subagent's line (its session is ``agent:NAME#N``) says whose it is."""
    if not session.startswith("agent:"):
        return line
    return Text.assemble((f"[{session}] ", "cyan"), line)


class JsonLinesRenderer:
    """One JSON object per event (``event.model_dump(mode="json")``), one per line, flushed as it goes."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: SessionEvent | SubagentFinished) -> None:
        self.write(event.model_dump(mode="json"))

    def write(self, obj: Mapping[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()
