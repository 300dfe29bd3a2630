"""Path patterns (a glob, grep's ``glob`` argument, ``.gitignore`` lines) matched within a time bound.

pathspec turns ``*a*a*a…b`` into ``[^/]*a[^/]*a…b``, which Python's ``re`` backtracks through without end on a long
name (a 28-star glob ran past 60 s, issue 43 item 18); a ``.gitignore`` in a cloned repository can hold such a line as
well. Each pattern's regex is compiled by the ``regex`` engine instead and every match gets the time left of one
budget per call (:class:`Deadline`), without holding the GIL: past it, the call stops with an error that says which
pattern and what to do. pathspec's own rules (the last match wins, directory marks) stay as they are.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import pathspec
import regex
from pathspec.pattern import RegexPattern

from sessions.tools.errors import ToolInputError

MATCH_TIMEOUT_S = 20.0
"""Seconds one glob or grep call may spend matching path patterns, unless its limits say otherwise."""


class Deadline:
    """The end of one call's budget for matching path patterns."""

    def __init__(self, seconds: float = MATCH_TIMEOUT_S) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


class TimedRegex:
    """A compiled pattern whose ``search`` and ``match`` stop at the deadline (what pathspec calls on ``.regex``)."""

    def __init__(self, source: str, deadline: Deadline, what: str) -> None:
        self.pattern = source
        self.compiled = regex.compile(source)
        self.deadline = deadline
        self.what = what

    def _run(self, method: Any, text: str) -> Any:
        left = self.deadline.left()
        try:
            if left <= 0:
                raise TimeoutError
            return method(text, concurrent=True, timeout=left)
        except TimeoutError:
            raise too_slow(self.what, self.deadline.seconds) from None

    def search(self, text: str) -> Any:
        return self._run(self.compiled.search, text)

    def match(self, text: str) -> Any:
        return self._run(self.compiled.match, text)


def too_slow(what: str, seconds: float) -> ToolInputError:
    return ToolInputError(
        f"matching file names against {what} took more than {seconds:g} s and was stopped: a pattern with many '*' "
        "backtracks without end on long names; use fewer wildcards, or a literal part of the name"
    )


def bounded_spec(lines: Iterable[str], deadline: Deadline, what: str) -> pathspec.GitIgnoreSpec:
    """``GitIgnoreSpec.from_lines(lines)`` whose every match runs within ``deadline`` (raises ValueError as it does)."""
    spec = pathspec.GitIgnoreSpec.from_lines(list(lines), backend="simple")
    for pattern in spec.patterns:
        if isinstance(pattern, RegexPattern) and pattern.regex is not None:
            pattern.regex = TimedRegex(pattern.regex.pattern, deadline, what)  # type: ignore[assignment]
    return spec


def described(spec: pathspec.GitIgnoreSpec) -> str:
    """What :func:`bounded_spec` said ``spec`` is (for the error of a matcher built from it)."""
    for pattern in spec.patterns:
        timed: object = getattr(pattern, "regex", None)
        if isinstance(timed, TimedRegex):
            return timed.what
    return "the patterns"
