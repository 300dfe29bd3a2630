"""Asking the user before a command or a write: the whole command (never cut), where it runs and what confines it;
yes once, always (saved as a rule), or no with a note for the model."""

from __future__ import annotations

import sys
from collections.abc import Callable

import trio

from sessions.permissions import Answer, Asker, Question

_lock = trio.Lock()


def terminal_asker(write: Callable[[str], None] | None = None, read: Callable[[], str] | None = None) -> Asker:
    """An asker on the terminal (stderr for the question, stdin for the answer)."""

    def out(text: str) -> None:
        (write or sys.stderr.write)(text)
        sys.stderr.flush()

    def line() -> str:
        return (read or sys.stdin.readline)()

    async def ask(question: Question) -> Answer:
        async with _lock:
            out(
                f"\n{question.tool} wants to run:\n  {question.subject}\n"
                f"  in {question.cwd}\n  sandbox: {question.sandbox}\n"
                f"[y] yes once  [a] always ({question.rule}, saved to reasonix.local.toml)  [n] no: "
            )
            while True:
                answer = (await trio.to_thread.run_sync(line)).strip().lower()
                if answer in ("y", "yes"):
                    return Answer(allow=True)
                if answer in ("a", "always"):
                    return Answer(allow=True, always=True)
                if answer in ("n", "no", ""):
                    out("a note for the model (optional, Enter to skip): ")
                    note = (await trio.to_thread.run_sync(line)).strip()
                    return Answer(allow=False, note=note)
                out("answer y, a or n: ")

    return ask
