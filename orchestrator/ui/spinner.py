"""``⠹ waiting for deepseek-v4-pro · 2.4s``: shown on a terminal while a request has produced nothing yet.

:class:`WaitIndicator` holds the state (what is awaited, since when) and renders the line from a clock function, so a
test drives it with a fake clock. :class:`Ticker` is the thread that redraws it while a request waits (the renderer is
fed by events, and no event comes while the model thinks); it runs only while something is awaited.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.spinner import Spinner
from rich.text import Text

SHOW_AFTER_S = 0.3
"""Shown only when the wait is noticeable, so a quick reply does not flicker."""
TICK_S = 0.1
_FRAMES = Spinner("dots")


class WaitIndicator:
    """What is being waited for, and since when (``clock()``, seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, show_after_s: float = SHOW_AFTER_S) -> None:
        self.clock = clock
        self.show_after_s = show_after_s
        self._label: str | None = None
        self._since = 0.0
        self._show_after_s = show_after_s

    @property
    def waiting(self) -> bool:
        return self._label is not None

    def begin(self, label: str, *, show_after_s: float | None = None) -> None:
        """Wait for ``label`` from now; shown after ``show_after_s`` (default: the indicator's own)."""
        self._label = label
        self._since = self.clock()
        self._show_after_s = self.show_after_s if show_after_s is None else show_after_s

    def end(self) -> None:
        self._label = None

    def line(self) -> Text | None:
        """The line to show now, or None (not waiting, or not for long enough yet)."""
        label = self._label
        if label is None:
            return None
        elapsed = self.clock() - self._since
        if elapsed < self._show_after_s:
            return None
        frames = _FRAMES.frames
        frame = frames[int(elapsed * 1000 / _FRAMES.interval) % len(frames)]
        text = Text()
        text.append(frame + " ", style="cyan")
        text.append(label, style="dim")
        text.append(f" · {elapsed:.1f}s", style="dim")
        return text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Renders the line as it is at each refresh (nothing when there is nothing to show)."""
        line = self.line()
        if line is not None:
            yield line


class Ticker:
    """Calls ``tick()`` every ``interval_s`` from a daemon thread for as long as ``active()`` is true; ``ensure()``
    starts the thread again when it has stopped."""

    def __init__(self, tick: Callable[[], None], active: Callable[[], bool], interval_s: float = TICK_S) -> None:
        self._tick = tick
        self._active = active
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def ensure(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reasonix-spinner", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self._interval_s)
            with self._lock:  # decided under the lock, so an ensure() racing with the exit starts a new thread
                if not self._active():
                    self._thread = None
                    return
            self._tick()
