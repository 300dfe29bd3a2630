"""Asking the user before a command or a write.

A command shows the whole command (never cut), where it runs and what confines it; an edit shows its diff and a new
file its first lines, before the answer (file tools run in Reasonix itself, so no sandbox line). Everything shown
comes from the model and is neutralised (:mod:`orchestrator.text.safe_text`): a command holding ``ESC[2K CR`` cannot
redraw the prompt into something else.

On a terminal the answer is one key: ``y`` yes once, ``a`` always (saved as a rule), ``n`` (or Enter, Esc) no with an
optional note for the model. Where an ask rule, a line that cannot be read or a hook asks, there is no ``a``: a
saved rule could never take effect there. The terminal is in cbreak mode only while the key is awaited, so Ctrl-C is
still SIGINT and cancels the turn at once: nothing typed afterwards is taken as the answer. Without a terminal (a
test, a pipe) answers are read as lines.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

import trio
from rich.console import Console
from rich.text import Text

from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted
from orchestrator.ui.tool_lines import edit_diff
from sessions.permissions import Answer, Asker, Question

WRITE_HEAD_LINES = 12
"""A new file's first lines shown before a ``write_file`` is approved."""
_POLL_S = 0.1
_lock = trio.Lock()
_step_aside: list[Callable[[bool], None]] = []


def step_aside_hooks() -> list[Callable[[bool], None]]:
    """Called with True before a question is asked on the terminal and False after it: whoever else reads the
    terminal (the conversation's keys during a turn) steps aside and leaves it in its usual mode meanwhile."""
    return _step_aside


Details = Callable[[Question], Mapping[str, Any] | None]
"""The full arguments of the call a question is about (from the ``ToolStarted`` event), when known."""


def _head(content: str, limit: int = WRITE_HEAD_LINES) -> Text:
    lines = content.splitlines()
    text = Text()
    for i, line in enumerate(lines[:limit]):
        if i:
            text.append("\n")
        text.append("    + " + neutralise(line), style="green")
    if len(lines) > limit:
        text.append(f"\n    … {counted(len(lines) - limit, 'more line')}", style="dim")
    return text


def question_text(question: Question, args: Mapping[str, Any] | None = None) -> Text:
    """What the prompt shows above the keys, every model-supplied part neutralised."""
    tool, subject = neutralise(question.tool), neutralise(question.subject)
    text = Text("\n")
    if question.tool == "edit_file" and args is not None:
        text.append(f"{tool} wants to change ", style="bold")
        text.append(subject, style="cyan")
        diff = edit_diff(args, max_lines=80)
        if diff.plain:
            text.append("\n")
            text.append_text(diff)
        return text
    if question.tool == "write_file" and args is not None:
        content = args.get("content")
        content = content if isinstance(content, str) else ""
        exists = bool(question.cwd) and os.path.isfile(os.path.join(question.cwd, question.subject))
        verb = "overwrite" if exists else "create"
        text.append(f"{tool} wants to {verb} ", style="bold")
        text.append(subject, style="cyan")
        text.append(f" ({counted(len(content.splitlines()), 'line')})", style="dim")
        if content:
            text.append("\n")
            text.append_text(_head(content))
        return text
    if question.tool in ("edit_file", "write_file"):
        text.append(f"{tool} wants to write ", style="bold")
        text.append(subject, style="cyan")
        return text
    text.append(f"{tool} wants to run:\n", style="bold")
    text.append("  " + subject.replace("\n", "\n  "), style="cyan")
    text.append(f"\n  in {neutralise(question.cwd)}\n  sandbox: {neutralise(question.sandbox)}", style="dim")
    return text


def keys_text(question: Question) -> str:
    if not question.can_save:  # nothing "always" could save would ever take effect
        return f"\n[y] yes once  [n] no  (asked every time: {neutralise(question.rule)}): "
    return f"\n[y] yes once  [a] always ({neutralise(question.rule)}, saved to reasonix.local.toml)  [n] no: "


def _wait_readable(fd: int, stop: threading.Event, size: int) -> bytes:
    """``os.read(fd, size)`` once ``fd`` is readable; ``b""`` when ``stop`` was set first (the wait was cancelled)."""
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], _POLL_S)
        if ready and not stop.is_set():
            return os.read(fd, size)
    return b""


async def _read_fd(fd: int, size: int) -> str:
    """Read from ``fd`` in a worker thread that a cancellation (Ctrl-C) abandons at once and that stops within
    :data:`_POLL_S` without reading anything more."""
    stop = threading.Event()
    try:
        data = await trio.to_thread.run_sync(_wait_readable, fd, stop, size, abandon_on_cancel=True)
    finally:
        stop.set()
    return data.decode("utf-8", errors="replace")


async def read_line(fd: int) -> str:
    """A line from the terminal ``fd`` in its usual mode (what Enter ended), abandoned at once on a cancellation."""
    return await _read_fd(fd, 4096)


async def read_key(fd: int) -> str:
    """One key from the terminal ``fd``: cbreak mode (no echo, no Enter needed, Ctrl-C still a signal) only while
    waiting, the terminal restored even when the wait is cancelled."""
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        return await _read_fd(fd, 32)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _answer(key: str) -> str | None:
    """``y``, ``a``, ``n`` for a key or a typed word; None for anything else."""
    word = key.strip().lower()
    if key.startswith("\x1b") or word in ("", "n", "no"):
        return "n"
    if word in ("y", "yes"):
        return "y"
    if word in ("a", "always"):
        return "a"
    return None


def terminal_asker(
    write: Callable[[str], None] | None = None,
    read: Callable[[], str] | None = None,
    *,
    details: Details | None = None,
) -> Asker:
    """An asker on the terminal (stderr for the question, stdin for the answer). ``write`` and ``read`` (a line at
    a time) replace them in tests; ``details`` looks up the arguments of the call asked about, to show a diff."""
    console = Console(stderr=True, highlight=False, soft_wrap=True)

    def out(text: Text | str) -> None:
        if write is not None:
            write(text.plain if isinstance(text, Text) else text)
            return
        console.print(text, end="", markup=False)
        sys.stderr.flush()

    def on_terminal() -> bool:
        return read is None and sys.stdin.isatty()

    async def line() -> str:
        if read is not None:
            return await trio.to_thread.run_sync(read)
        return await _read_fd(sys.stdin.fileno(), 4096)

    async def key() -> str:
        if not on_terminal():
            return await line()
        pressed = await read_key(sys.stdin.fileno())
        out(("n" if pressed[:1] in ("\r", "\n") else neutralise(pressed[:1])) + "\n")
        return pressed

    async def ask(question: Question) -> Answer:
        async with _lock:
            for hook in list(_step_aside):
                hook(True)
            try:
                return await asked(question)
            finally:
                for hook in list(_step_aside):
                    hook(False)

    async def asked(question: Question) -> Answer:
        out(question_text(question, details(question) if details is not None else None))
        out(keys_text(question))
        while True:
            choice = _answer(await key())
            if choice == "y":
                return Answer(allow=True)
            if choice == "a" and question.can_save:
                return Answer(allow=True, always=True)
            if choice == "n":
                out("a note for the model (optional, Enter to skip): ")
                note = (await line()).strip()
                return Answer(allow=False, note=note)
            out("press y, a or n: " if question.can_save else "press y or n: ")

    return ask
