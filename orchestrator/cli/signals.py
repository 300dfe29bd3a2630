"""Ctrl-C as a clean cancellation: the first SIGINT cancels a scope (so sessions unwind, flush their journals and
close their connections) instead of raising KeyboardInterrupt at an arbitrary checkpoint."""

from __future__ import annotations

import signal
import threading

import trio


async def cancel_on_sigint(scope: trio.CancelScope) -> None:
    """Cancel ``scope`` at the first SIGINT; after that, Ctrl-C has its default effect again.

    Off the main thread (where signals cannot be received) this waits forever and does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        await trio.sleep_forever()
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return
