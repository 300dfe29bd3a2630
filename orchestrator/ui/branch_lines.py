"""The branches of a parallel wave on the terminal: one line per running step instead of interleaved streams.

Session events of a branch carry its ``step_id``. On a terminal, :class:`BranchBoard` keeps, per running step, what
it is doing now (waiting for the model, thinking, writing, a tool call) and since when, and renders one live line per
step (``◐ S1 Add left.py · write_file left.py · 3.2s``). Not on a terminal, only whole lines are printed, prefixed
with the step (``[S1] → write_file left.py``): streamed text of two branches would interleave into garbage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from orchestrator.events import BranchMerged, BranchRerun, WaveStarted
from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted
from orchestrator.ui.tool_lines import short
from sessions import RequestStarted, SessionEvent, StreamUpdate, ToolFinished, ToolStarted, TurnFinished
from sessions.wire import ContentDelta, ReasoningDelta


@dataclass
class _Row:
    title: str
    doing: str
    since: float


class BranchBoard:
    """What each running branch is doing; ``clock`` gives the elapsed times."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._rows: dict[str, _Row] = {}

    @property
    def active(self) -> bool:
        return bool(self._rows)

    def wave(self, event: WaveStarted, titles: dict[str, str]) -> Text:
        now = self._clock()
        for sid in event.step_ids:
            self._rows[sid] = _Row(titles.get(sid, ""), "starting", now)
        return Text(f"⇉ {len(event.step_ids)} steps at once: {', '.join(event.step_ids)}", style="bold")

    def clear(self) -> None:
        """The wave is over (the goal changed state or ended): no branch is running."""
        self._rows.clear()

    def joined(self, event: BranchMerged | BranchRerun) -> Text:
        self._rows.pop(event.step_id, None)
        if isinstance(event, BranchMerged):
            return Text(f"✓ {event.step_id} merged ({counted(len(event.changed), 'file')})", style="green")
        return Text(f"↻ {event.step_id} runs again, alone: {short(neutralise(event.reason), 200)}", style="yellow")

    def session_event(self, event: SessionEvent) -> Text | None:
        """Note what the branch does now; the whole line to print when not on a terminal (or ``None``)."""
        sid = event.step_id
        assert sid is not None
        row = self._rows.setdefault(sid, _Row("", "", self._clock()))
        line: str | None = None
        if isinstance(event, RequestStarted):
            row.doing = f"waiting for {event.model}"
        elif isinstance(event, StreamUpdate):
            if isinstance(event.event, ReasoningDelta):
                row.doing = "thinking"
            elif isinstance(event.event, ContentDelta):
                row.doing = "writing"
        elif isinstance(event, ToolStarted):
            row.doing = f"{event.name} {short(neutralise(event.args_preview), 60)}"
            line = f"→ {row.doing}"
        elif isinstance(event, ToolFinished) and event.is_error:
            line = f"✗ {event.name}: {short(neutralise(event.preview), 100)}"
        elif isinstance(event, TurnFinished):
            row.doing = "verifying"
            line = f"turn {event.status} · {counted(event.requests, 'request')} · ${event.cost_usd:.4f}"
        return Text(f"[{sid}] {line}", style="dim") if line is not None else None

    def render(self) -> Text:
        now = self._clock()
        text = Text()
        for i, (sid, row) in enumerate(self._rows.items()):
            if i:
                text.append("\n")
            text.append(f"◐ {sid} ", style="bold yellow")
            text.append(short(neutralise(row.title), 40))
            text.append(f" · {row.doing} · {now - row.since:.1f}s", style="dim")
        return text
