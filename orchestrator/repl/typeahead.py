"""The keyboard while a turn runs: Esc cancels the turn (as Ctrl-C does), and what is typed is kept: a line ended
with Enter is queued and runs after the turn, the rest starts the next prompt.

The terminal is in cbreak mode for the turn (no echo, a key at a time; Ctrl-C is still SIGINT). A key that arrives
alone as ``ESC`` is Esc; an escape sequence (an arrow key) is dropped. While a permission question is asked
(:func:`orchestrator.ui.approval.asking_on_terminal`), the reader steps aside and the terminal is back in its
usual mode, so the answer and its note are read as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import outcome
import trio

from orchestrator.ui.approval import step_aside_hooks


class Typist(Protocol):
    """What the reader needs of the conversation: where queued lines go, and how to say something."""

    queued: list[str]
    pending: str

    def say(self, text: str, style: str = "dim") -> None: ...


T = TypeVar("T")
ESC = b"\x1b"
ENTER = (b"\r", b"\n")
ERASE = (b"\x7f", b"\x08")


class TurnKeys:
    """Reads the terminal during one turn; see the module docstring."""

    def __init__(self, conv: Typist, scope: trio.CancelScope, fd: int) -> None:
        self.conv = conv
        self.scope = scope
        self.fd = fd
        self.buffer = bytearray()
        self.paused = False
        self.resumed = trio.Event()
        import termios

        self.saved = termios.tcgetattr(fd)

    def cbreak(self) -> None:
        import termios
        import tty

        tty.setcbreak(self.fd, termios.TCSANOW)

    def restore(self) -> None:
        import termios

        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def step_aside(self, asking: bool) -> None:
        if asking:
            self.paused = True
            self.resumed = trio.Event()
            self.restore()
        else:
            self.cbreak()
            self.paused = False
            self.resumed.set()

    def feed(self, data: bytes) -> None:
        if data.strip(ESC) == b"":  # Esc alone (or pressed twice): cancel the turn
            if not self.scope.cancel_called:
                self.conv.say("Esc: cancelling the turn", "yellow")
                self.scope.cancel()
            return
        if data.startswith(ESC):
            return  # an escape sequence (arrow keys and the like)
        for byte in data:
            key = bytes([byte])
            if key in ENTER:
                line = self.buffer.decode("utf-8", "replace").strip()
                self.buffer.clear()
                if line:
                    self.conv.queued.append(line)
                    self.conv.say(f"queued (runs after this turn): {line}")
            elif key in ERASE:
                del self.buffer[-1:]
            elif byte >= 0x20 or key == b"\t":
                self.buffer.append(byte)

    async def watch(self) -> None:
        while True:
            await trio.lowlevel.wait_readable(self.fd)
            if self.paused:
                await self.resumed.wait()
                continue
            try:
                data = os.read(self.fd, 1024)
            except BlockingIOError:
                continue
            if not data:
                await trio.sleep_forever()  # the terminal is gone: nothing more will be typed
            self.feed(data)


async def with_turn_keys(conv: Typist, scope: trio.CancelScope, run: Callable[[], Awaitable[T]]) -> T:
    """``await run()`` with the keyboard read as the module docstring says (only on a terminal). What ``run``
    raises (a cancellation too) is raised as it is, not in a group."""
    if not sys.stdin.isatty():
        return await run()
    keys = TurnKeys(conv, scope, sys.stdin.fileno())
    result: outcome.Outcome[T] | None = None
    hooks = step_aside_hooks()
    keys.cbreak()
    hooks.append(keys.step_aside)
    try:
        async with trio.open_nursery() as nursery:

            async def main() -> None:
                nonlocal result
                result = await outcome.acapture(run)
                nursery.cancel_scope.cancel()

            nursery.start_soon(main)
            nursery.start_soon(keys.watch)
    finally:
        hooks.remove(keys.step_aside)
        keys.restore()
        conv.pending = keys.buffer.decode("utf-8", "replace")
    assert result is not None
    return result.unwrap()
