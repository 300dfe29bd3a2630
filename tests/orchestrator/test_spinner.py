"""The wait spinner (issue 11 item 18): ``⠹ waiting for <model> · 2.4s`` on a real terminal while a request has
produced nothing yet, gone once text streams; never on a pipe. Driven by events and a fake clock, no real sleeps."""

from __future__ import annotations

import io
import re
import threading

from rich.console import Console

from orchestrator.ui.goal_view import GoalTerminalUI
from orchestrator.ui.spinner import Ticker, WaitIndicator
from orchestrator.ui.stream import TerminalRenderer
from sessions.events import RequestStarted, StreamUpdate, TurnFinished
from sessions.wire.stream import ContentDelta, KeepAlive, ReasoningDelta, StreamRestarted

ERASE = "\x1b[1G\x1b[2K"
SGR = re.compile("\x1b\\[[0-9;]*m")


def _plain(text: str) -> str:
    """Without the colours (cursor moves and erases kept)."""
    return SGR.sub("", text)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _request(model: str = "deepseek-v4-pro") -> RequestStarted:
    return RequestStarted(
        session="executor", request_index=1, model=model, body_bytes=1, prefix_fingerprint="f", messages=2
    )


def _terminal(*, tty: bool = True) -> tuple[TerminalRenderer, io.StringIO, FakeClock]:
    out, clock = io.StringIO(), FakeClock()
    console = Console(file=out, width=80, force_terminal=tty, color_system="standard" if tty else None)
    return TerminalRenderer(console, clock=clock, tick=False, markdown=False), out, clock


def test_the_spinner_counts_the_wait_and_is_erased_when_text_streams() -> None:
    renderer, out, clock = _terminal()
    renderer(_request())
    clock.now += 0.1
    renderer.tick()
    assert out.getvalue() == ""  # a quick first token never shows a spinner
    clock.now += 1.2
    renderer.tick()
    renderer(StreamUpdate(session="executor", event=KeepAlive()))
    clock.now += 1.7
    renderer.tick()
    drawn = out.getvalue()
    assert "waiting for deepseek-v4-pro · 1.3s" in _plain(drawn)
    assert _plain(drawn).endswith(" waiting for deepseek-v4-pro · 3.0s\x1b[0K")
    assert drawn.startswith("\x1b[1G") and "\n" not in drawn  # redrawn in place, on one line
    renderer(StreamUpdate(session="executor", event=ReasoningDelta(text="Think.")))
    clock.now += 1
    renderer.tick()  # a pause shorter than a stall shows nothing
    renderer(StreamUpdate(session="executor", event=ContentDelta(text="Answer.")))
    renderer(TurnFinished(session="executor", status="done", text="Answer.", requests=1, failures=0, cost_usd=0.0))
    after = out.getvalue()[len(drawn) :]
    assert after == ERASE + "\x1b[2mThink.\x1b[0m\nAnswer.\n"  # erased, then the text where the spinner was


def test_a_stall_mid_stream_shows_the_spinner_after_the_text_with_the_time() -> None:
    """Issue 23 item 11: a reply that stops streaming for 25 s keeps a spinner and the elapsed time."""
    renderer, out, clock = _terminal()
    renderer(_request("deepseek-v4-flash"))
    renderer(StreamUpdate(session="executor", event=ContentDelta(text="Half a sentence")))
    mark = len(out.getvalue())
    clock.now += 25
    renderer.tick()
    stalled = _plain(out.getvalue()[mark:])
    assert stalled.startswith("\x1b[18G") and "deepseek-v4-flash is quiet · 25.0s" in stalled  # after the text
    renderer(StreamUpdate(session="executor", event=ContentDelta(text=" and the rest.")))
    renderer.end_line()
    rest = _plain(out.getvalue()[mark:])
    assert rest.endswith("\x1b[16G\x1b[0K and the rest.\n")  # erased from where the text ended, then more text


def test_a_retry_keeps_the_spinner_going_below_its_line() -> None:
    renderer, out, clock = _terminal()
    renderer(_request("deepseek-v4-flash"))
    clock.now += 2
    renderer.tick()
    renderer(StreamUpdate(session="executor", event=StreamRestarted(attempt=2, reason="HTTP 503")))
    clock.now += 1
    renderer.tick()
    text = out.getvalue()
    restart = text.index("↻ attempt 2")
    assert text.rindex(ERASE, 0, restart) < restart  # the spinner line was erased before the restart line
    assert _plain(text).endswith("waiting for deepseek-v4-flash · 3.0s\x1b[0K")
    renderer.end_line()  # what `reasonix run` calls before its summary, or when interrupted
    assert out.getvalue().endswith(ERASE) and not renderer.waiting.waiting


def test_no_spinner_when_output_is_not_a_terminal() -> None:
    renderer, out, clock = _terminal(tty=False)
    renderer(_request())
    clock.now += 10
    renderer.tick()
    renderer(StreamUpdate(session="executor", event=ContentDelta(text="Hi")))
    renderer.end_line()
    assert out.getvalue() == "Hi\n"


def test_the_live_goal_view_shows_the_wait_under_the_plan_until_text_streams() -> None:
    out, clock = io.StringIO(), FakeClock()
    console = Console(file=out, width=80, force_terminal=True, color_system="standard")
    ui = GoalTerminalUI(console, live=True, clock=clock, tick=False)
    ui.start()
    ui(_request())
    clock.now += 2.5
    ui.redraw()
    assert "waiting for deepseek-v4-pro · 2.5s" in _plain(out.getvalue())
    clock.now += 1
    mark = len(out.getvalue())
    ui(StreamUpdate(session="executor", event=ContentDelta(text="First words")))
    ui.redraw()
    last_frame = out.getvalue()[mark:]
    assert "First words" in last_frame and "waiting" not in last_frame
    ui.stop()


def test_the_indicator_line_and_the_ticker_thread() -> None:
    clock = FakeClock()
    indicator = WaitIndicator(clock, show_after_s=0.5)
    assert indicator.line() is None
    indicator.begin("waiting for m")
    clock.now += 0.49
    assert indicator.line() is None
    clock.now += 0.01
    line = indicator.line()
    assert line is not None and line.plain.endswith(" waiting for m · 0.5s")
    ticks: list[int] = []
    done = threading.Event()

    def tick() -> None:
        ticks.append(1)
        if len(ticks) == 3:
            indicator.end()
            done.set()

    ticker = Ticker(tick, lambda: indicator.waiting, interval_s=0)
    ticker.ensure()
    assert done.wait(30)
    indicator.begin("again")
    ticker.ensure()  # starts a new thread once the first has ended, or leaves the running one
    indicator.end()
