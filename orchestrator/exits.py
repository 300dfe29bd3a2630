"""The exit status of every ``reasonix`` command, in one table, and what becomes of an exception that escapes one.

======  =================================================================================================
status  meaning
======  =================================================================================================
0       done: the goal is complete, the plan approved and saved, the task finished, every scenario held
1       failed, blocked, an invalid plan file, or stopped by DeepSeek (an API error: 402, a 5xx that did
        not clear, an answer that is not an event stream, an unreachable host); the message says what to
        do next, and for a goal the resume command
2       a usage or configuration problem (bad option, empty objective, unreadable config, no API key)
3       paused (a budget or limit was reached); the resume command is printed
4       cancelled by you at the plan review: nothing was executed (a choice, not a failure, and not a
        success a script should go on from)
130     interrupted by Ctrl-C (a goal is paused and resumable; a second Ctrl-C exits at once)
141     standard output was closed early (``reasonix replay | head``): nothing more is printed
======  =================================================================================================

:func:`escaped` is the one place an exception that leaves a command is turned into one line and one of these codes.
It looks inside trio's exception groups (a nursery wraps whatever its tasks raise), so no user sees an
``ExceptionGroup`` traceback for an API failure, a Ctrl-C or a closed pipe. An exception it does not recognise is a bug
and is re-raised with its traceback.

Standard library only at module level: the entry point imports this, and ``reasonix --help`` must stay fast.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from enum import IntEnum
from typing import Literal, get_args

GoalState = Literal[
    "planning",
    "awaiting_review",
    "executing",
    "replanning",
    "complete",
    "blocked",
    "paused",
    "failed",
    "cancelled",
]
EndState = Literal["complete", "blocked", "paused", "failed", "cancelled"]
"""The states a run of the goal loop ends in (``paused`` is resumable). Here, with the exit statuses they map to,
so that what reads a run's state (``reasonix runs``, the goal store) does not import the events' models."""
TERMINAL_STATES: frozenset[str] = frozenset(get_args(EndState))


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    PAUSED = 3
    CANCELLED = 4
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for `yes | head`


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``exc``, with every (nested) exception group opened up."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_broken_pipe(exc: BaseException) -> bool:
    """A write to a closed pipe, also as rich reports it (``SystemExit(1)`` raised while handling the EPIPE)."""
    return any(
        isinstance(part, BrokenPipeError)
        or (isinstance(part, SystemExit) and any(isinstance(c, BrokenPipeError) for c in _chain(part)))
        for leaf in leaves(exc)
        for part in _chain(leaf)
    )


def silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush does not fail on the closed pipe again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _say(prog: str, message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"{prog}: {message}", file=sys.stderr, flush=True)


def escaped(exc: BaseException, prog: str = "reasonix") -> int | None:
    """The exit status for an exception that escaped a command, after printing at most one line about it.

    ``None`` when the exception is not one a user should see as a message (a bug, or ``SystemExit``): re-raise it.
    """
    if is_broken_pipe(exc):
        silence_stdout()
        return ExitCode.BROKEN_PIPE
    if isinstance(exc, SystemExit):
        return None  # argparse's usage errors and --help: already said, and nothing below needs importing
    found = list(leaves(exc))
    if any(isinstance(leaf, KeyboardInterrupt) for leaf in found):
        _say(prog, "interrupted")
        return ExitCode.INTERRUPTED
    from orchestrator.errors import ConfigError, ReasonixError, UsageError

    for leaf in found:
        if isinstance(leaf, (ConfigError, UsageError)):
            _say(prog, str(leaf))
            return ExitCode.USAGE
    from plans import PlanError  # only now: a usage error imports nothing more
    from sessions.wire import DeepSeekError

    for leaf in found:
        if isinstance(leaf, (DeepSeekError, ReasonixError, PlanError)):
            _say(prog, str(leaf))
            return ExitCode.FAILED
    return None
