"""Ctrl-C, handled in one place for every command that talks to DeepSeek (``run``, ``goal``, ``plan``, ``exec``).

The first SIGINT cancels the work's scope, so sessions unwind, flush their journals and close their connections (a
goal is then paused and resumable); the second exits at once with status 130, keeping what was printed. Commands run
their work through :func:`run_interruptible`, which returns ``None`` when the work was interrupted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, NoReturn, TypeVar

import trio

from orchestrator.exits import ExitCode

T = TypeVar("T")


def hard_exit(code: int = ExitCode.INTERRUPTED) -> NoReturn:
    """Flush what was printed and leave now, without unwinding (the second Ctrl-C)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


async def watch_interrupts(
    scope: trio.CancelScope,
    *,
    on_first: Callable[[], None] = lambda: None,
    on_second: Callable[[], None] = hard_exit,
) -> None:
    """The first SIGINT calls ``on_first`` and cancels ``scope``; the second calls ``on_second`` (by default: exit at
    once with status 130). Off the main thread (where signals cannot be received) this waits forever and does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        await trio.sleep_forever()
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        seen = 0
        async for _ in signals:
            seen += 1
            if seen == 1:
                on_first()
                scope.cancel()
            else:
                on_second()


def run_interruptible(
    work: Callable[[], Awaitable[T]],
    *,
    resource: AbstractAsyncContextManager[Any],
    on_first: Callable[[], None] = lambda: None,
) -> T | None:
    """``trio.run`` of ``work`` inside ``resource`` (the HTTP client), Ctrl-C watched; ``None`` when interrupted.

    Whatever ``work`` raises leaves as trio raises it (possibly inside an exception group): callers catch with
    ``except*``, and :func:`orchestrator.exits.escaped` turns the rest into one line and an exit status.
    """

    async def main() -> T | None:
        result: T | None = None
        async with resource, trio.open_nursery() as nursery:
            scope = trio.CancelScope()
            nursery.start_soon(lambda: watch_interrupts(scope, on_first=on_first))
            with scope:
                result = await work()
            nursery.cancel_scope.cancel()
        return result

    return trio.run(main)
