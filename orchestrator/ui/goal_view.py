"""Showing a goal on the terminal: the plan with each step's state, streamed text, tool calls, escalations, budget
warnings, and a footer with costs, cache-hit ratios (planner, executor, overall) and the budget used.

:class:`GoalTerminalUI` is a plain callable ``(event) -> None`` taking session and goal events alike, so it can be a
:class:`~orchestrator.goal.runner.GoalRunner`'s ``on_event``. Session events (streamed text, tool calls, repairs,
compaction) go through :class:`~orchestrator.ui.stream.TerminalRenderer`, exactly as in ``reasonix run``.

On a terminal the plan tree, the line being streamed and the footer live at the bottom of the screen (rich ``Live``),
and everything else scrolls above them. Not on a terminal (a pipe, a file, a test), the tree is printed when a plan is
proposed or revised, one line per step state change, and a footer line after every request.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from orchestrator.events import GoalEvent, GoalEventBase, GoalFinished, GoalStateChanged
from orchestrator.policy.budget import BudgetTracker
from orchestrator.summary import Summary
from orchestrator.text.safe_text import neutralise_model
from orchestrator.text.wording import counted
from orchestrator.ui.branch_lines import BranchBoard
from orchestrator.ui.goal_event_lines import GOAL_EVENT_LINES
from orchestrator.ui.goal_lines import print_whole
from orchestrator.ui.spinner import Ticker
from orchestrator.ui.stream import SESSION_SCALE, TerminalRenderer, cost_style
from plans import Plan, plan_tree
from sessions import DiagnosticsReported, RequestStarted, SessionEvent, StreamUpdate, TurnFinished, UsageReported

AnyEvent = SessionEvent | GoalEvent
SESSIONS = ("planner", "executor")
STREAM_REFRESH_S = 0.1


def _percent(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:.1f}%"


@dataclass
class _Tokens:
    hit: int = 0
    prompt: int = 0

    @property
    def ratio(self) -> float | None:
        return self.hit / self.prompt if self.prompt else None


class CostBoard:
    """The figures of the footer, kept from the events: turn and session cost, and cache hits per session."""

    def __init__(self) -> None:
        self.turn_usd: dict[str, float] = {}
        self.session_usd: dict[str, float] = {}
        self.tokens: dict[str, _Tokens] = {}
        self.last_session: str | None = None
        self.requests = 0
        """Requests of this process: one per usage event, aborted or not (what goal.json and the summary count)."""
        self.cost_usd = 0.0
        self.resumed = False
        """A session went on from requests made before this process (a resumed goal): the footer's ratios count only
        the requests since, and say so (the summary at the end counts the whole run)."""
        self._turn_over: set[str] = set()
        self._diagnosed: set[str] = set()

    def diagnosed(self, session: str, request_index: int) -> None:
        if session not in self._diagnosed:
            self._diagnosed.add(session)
            self.resumed = self.resumed or request_index > 1

    def usage(self, event: UsageReported) -> None:
        if event.session in self._turn_over:  # a finished turn's cost stays shown until the next turn spends
            self._turn_over.discard(event.session)
            self.turn_usd[event.session] = 0.0
        self.requests += 1
        self.cost_usd += event.cost_usd
        self.turn_usd[event.session] = self.turn_usd.get(event.session, 0.0) + event.cost_usd
        self.session_usd[event.session] = event.session_cost_usd
        tokens = self.tokens.setdefault(event.session, _Tokens())
        tokens.hit += event.usage.prompt_cache_hit_tokens
        tokens.prompt += event.usage.prompt_tokens
        self.last_session = event.session

    def turn_finished(self, session: str) -> None:
        self._turn_over.add(session)

    @property
    def overall(self) -> float | None:
        prompt = sum(t.prompt for t in self.tokens.values())
        return sum(t.hit for t in self.tokens.values()) / prompt if prompt else None

    def ratio(self, session: str) -> float | None:
        tokens = self.tokens.get(session)
        return tokens.ratio if tokens is not None else None


def _share_style(share: float) -> str:
    return "red" if share >= 1 else "yellow" if share >= 0.8 else ""


def budget_text(tracker: BudgetTracker) -> Text:
    """``budget $0.0457 of $1.00 · 12 of 40 requests``; what was spent when no limit is set."""
    usage, budget = tracker.usage, tracker.budget
    text = Text()
    parts: list[tuple[str, str]] = []
    if budget.usd is not None:
        parts.append((f"${usage.usd:.4f} of ${budget.usd:.2f}", _share_style(usage.usd / budget.usd)))
    if budget.requests is not None:
        share = usage.requests / budget.requests
        parts.append((f"{usage.requests} of {budget.requests} requests", _share_style(share)))
    if budget.minutes is not None:
        minutes = usage.seconds / 60
        parts.append((f"{minutes:.1f} of {budget.minutes:g} min", _share_style(minutes / budget.minutes)))
    text.append("budget ", style="dim")
    if not parts:
        text.append(f"${usage.usd:.4f} (no limit)")
        return text
    for i, (part, style) in enumerate(parts):
        if i:
            text.append(" · ", style="dim")
        text.append(part, style=style)
    return text


def goal_footer(board: CostBoard, session: str, budget: BudgetTracker | None) -> Text:
    """``executor · turn $0.0012 · session $0.0345 · cache planner 99.1% · executor 98.7% · overall 98.9% · budget``
    followed by the budget used. The ratios are this process's requests: after a resume the footer says
    ``cache since resume``, since the summary's ``cache`` counts the whole run."""
    text = Text()
    text.append(session, style="bold")
    turn = board.turn_usd.get(session, 0.0)
    spent = board.session_usd.get(session, 0.0)
    text.append(" · turn ", style="dim")
    text.append(f"${turn:.4f}", style=cost_style(turn))
    text.append(" · session ", style="dim")
    text.append(f"${spent:.4f}", style=cost_style(spent, SESSION_SCALE))
    text.append(" · cache since resume " if board.resumed else " · cache ", style="dim")
    for name in SESSIONS:
        text.append(f"{name} ", style="dim")
        text.append(_percent(board.ratio(name)), style="cyan")
        text.append(" · ", style="dim")
    text.append("overall ", style="dim")
    text.append(_percent(board.overall), style="cyan")
    if budget is not None:
        text.append(" · ", style="dim")
        text.append_text(budget_text(budget))
    return text


class _LineBuffer(io.StringIO):
    """What the renderer writes while ``Live`` runs: whole lines go above the live region, the open one stays in it."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        super().__init__()
        self._emit = emit
        self.partial = ""

    def write(self, s: str) -> int:
        text = self.partial + s
        *lines, self.partial = text.split("\n")
        for line in lines:
            self._emit(line)
        return len(s)


class GoalTerminalUI:
    """Session and goal events on a rich console. ``plan_state`` returns the current plan with each step's state
    (``GoalRunner.plan_with_state``); ``budget`` is the goal's tracker, for the footer. ``live`` defaults to whether
    ``console`` is a terminal. ``clock`` and ``tick`` are the spinner's (see
    :class:`~orchestrator.ui.stream.TerminalRenderer`): while a request waits for its first token, a line under the
    plan says for how long."""

    def __init__(
        self,
        console: Console,
        *,
        plan_state: Callable[[], Plan | None] | None = None,
        budget: BudgetTracker | None = None,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        tick: bool = True,
    ) -> None:
        self.console = console
        self.board = CostBoard()
        self._plan_state = plan_state
        self._budget = budget
        self._use_live = console.is_terminal if live is None else live
        self._clock = clock
        self._live: Live | None = None
        self._drawn_at = 0.0
        self._buffer: _LineBuffer | None = None
        self._ticker: Ticker | None = None
        self._reviewing = False
        """The review is on: the live region leaves the plan out (the review prints it whole, with instructions)."""
        self.branches = BranchBoard(clock)
        """The running branches of a parallel wave: a live line each (their streams are never interleaved)."""
        if self._use_live:
            self._buffer = _LineBuffer(self._emit_ansi_line)
            stream_console = Console(
                file=self._buffer,
                width=console.width,
                color_system=console.color_system,  # type: ignore[arg-type]
                force_terminal=True,
                highlight=False,
                soft_wrap=True,
            )
            # the live region shows the spinner (renderer.waiting), redrawn by this UI's own ticker
            self.renderer = TerminalRenderer(stream_console, spinner=False, clock=clock)
            if tick:
                self._ticker = Ticker(self.redraw, lambda: self.renderer.waiting.waiting)
        else:
            self.renderer = TerminalRenderer(console, clock=clock, tick=tick)

    # ------------------------------------------------------------------------------------------------ live region

    def _emit_ansi_line(self, line: str) -> None:
        self.console.print(Text.from_ansi(line), soft_wrap=True, highlight=False)

    def _region(self) -> RenderableType:
        parts: list[RenderableType] = []
        plan = self._plan_state() if self._plan_state is not None and not self._reviewing else None
        if plan is not None:
            parts.append(plan_tree(neutralise_model(plan)))
        if self._buffer is not None and self._buffer.partial:
            parts.append(Text.from_ansi(self._buffer.partial))
        if self.branches.active:
            parts.append(self.branches.render())
        parts.append(self.renderer.waiting)  # renders at each refresh: nothing unless a request is waiting
        session = self.board.last_session
        if session is not None:
            parts.append(goal_footer(self.board, session, self._budget))
        return Group(*parts)

    def start(self) -> None:
        """Start the live region (on a terminal); a no-op otherwise."""
        if self._use_live and self._live is None:
            self._live = Live(self._region(), console=self.console, auto_refresh=False, transient=False)
            self._live.start()

    def stop(self) -> None:
        """Stop the live region, leaving its last state on the screen; close any open streamed line."""
        self.renderer.end_line()
        if self._live is not None:
            self._live.update(self._region(), refresh=True)
            self._live.stop()
            self._live = None

    def redraw(self) -> None:
        """Redraw the live region as it stands (from the spinner's thread)."""
        live = self._live
        if live is not None:
            live.refresh()

    def _refresh(self, *, streaming: bool = False) -> None:
        """Redraw the live region: at once for a state change, at most every ``STREAM_REFRESH_S`` while text streams
        (a redraw repaints the whole tree)."""
        if self._live is None:
            return
        now = self._clock()
        if streaming and now - self._drawn_at < STREAM_REFRESH_S:
            return
        self._drawn_at = now
        self._live.update(self._region(), refresh=True)

    # ------------------------------------------------------------------------------------------------ output

    def line(self, text: Text) -> None:
        self.renderer.line(text)

    def show_plan(self, title: str | None = None, *, detail: bool = False, live_too: bool = False) -> None:
        """Print the current plan tree (not on a terminal, unless ``live_too``; there, the live region shows it).
        ``detail`` adds each step's instructions and acceptance criteria (what a reviewer reads)."""
        plan = self._plan_state() if self._plan_state is not None else None
        if plan is None or (self._use_live and not live_too):
            return
        self.renderer.end_line()
        if title:
            self.console.print(Text(title, style="bold"), soft_wrap=True)
        print_whole(self.console, plan_tree(neutralise_model(plan), detail=detail))

    # ------------------------------------------------------------------------------------------------ events

    def __call__(self, event: AnyEvent) -> None:
        if not isinstance(event, GoalEventBase) and event.step_id is not None:  # a branch of a parallel wave
            if isinstance(event, UsageReported):
                self.board.usage(event)
            shown = self.branches.session_event(event)
            if shown is not None and not self._use_live:
                self.line(shown)
            self._refresh(streaming=True)
            return
        if isinstance(event, UsageReported):
            self.board.usage(event)
        elif isinstance(event, DiagnosticsReported):
            self._diagnostics(event)
        elif isinstance(event, TurnFinished):
            self.renderer(event)
            self.board.turn_finished(event.session)
        elif isinstance(event, GoalEventBase):
            self._goal(event)
        else:
            self.renderer(event)
            if isinstance(event, RequestStarted) and self._ticker is not None and self._live is not None:
                self._ticker.ensure()
        self._refresh(streaming=isinstance(event, StreamUpdate))

    def _diagnostics(self, event: DiagnosticsReported) -> None:
        d = event.diagnostics
        self.board.diagnosed(event.session, d.request_index)
        if d.unexplained_miss:
            self.line(
                Text(
                    f"✗ unexplained cache miss in {event.session}: {d.hit_tokens} of an expected "
                    f"{d.expected_hit_tokens} tokens hit",
                    style="red",
                )
            )
        elif d.change_reason is not None and d.request_index > 1:
            self.line(Text(f"cache ({event.session}): {d.change_reason}", style="yellow"))
        if not self._use_live:
            self.line(goal_footer(self.board, event.session, self._budget))

    def _goal(self, event: GoalEvent) -> None:
        if isinstance(event, GoalStateChanged | GoalFinished):
            self.branches.clear()
        # by class, or the nearest base class that has a line (a goal event declared elsewhere, as a subclass)
        render = next((GOAL_EVENT_LINES[c] for c in type(event).__mro__ if c in GOAL_EVENT_LINES), None)
        if render is not None:
            render(self, event)
        else:  # a kind without a line of its own yet: named, never dropped in silence
            self.line(Text(f"· {event.kind}", style="dim"))

    # ------------------------------------------------------------------------------------------------ for the lines

    @property
    def use_live(self) -> bool:
        """The view draws a live region (a terminal): the plan is shown there, not printed."""
        return self._use_live

    def pause_for_review(self) -> None:
        """The review starts: the live region stops, and leaves the plan out until :meth:`review_done`."""
        self._reviewing = True
        self.stop()

    def review_done(self) -> None:
        self._reviewing = False
        self.start()

    def step_titles(self) -> dict[str, str]:
        plan = self._plan_state() if self._plan_state is not None else None
        return {s.id: s.title for s in plan.steps} if plan is not None else {}


def summary_text(summary: Summary) -> Text:
    """The last line of a goal on the terminal, from its :class:`~orchestrator.summary.Summary`."""
    status = "planned" if summary.command == "plan" and summary.status == "paused" else summary.status
    text = Text()
    style = "bold green" if status in ("complete", "planned") else "bold yellow" if status == "paused" else "bold red"
    text.append(status, style=style)
    text.append(
        f" · {summary.steps_done}/{summary.steps_total} steps · {counted(summary.requests, 'request')} · ", "dim"
    )
    text.append(f"${summary.cost_usd:.4f}", style=cost_style(summary.cost_usd, SESSION_SCALE))
    text.append(" · cache ", style="dim")
    text.append(_percent(summary.cache_hit_ratio), style="cyan")
    if summary.sessions:
        shown = [
            f"{name} {_percent(summary.sessions[name].cache_hit_ratio)}"
            for name in SESSIONS
            if name in summary.sessions
        ]
        text.append(f" ({', '.join(shown)})", style="dim")
    text.append(f" · {counted(summary.escalations, 'escalation')} · {counted(summary.replans, 'replan')}", style="dim")
    return text
