"""The orchestrator's errors, named for who is at fault. Each message says what happened and what to do next."""

from __future__ import annotations

from dataclasses import dataclass


class ReasonixError(Exception):
    """Base of every error the orchestrator raises on purpose."""


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong in one configuration source."""

    source: str
    """Where the bad value came from: a file path, ``environment`` or ``command line``."""
    key: str | None
    """The dotted key (``client.stall_timeout_s``); ``None`` when the whole source is unreadable."""
    message: str

    def __str__(self) -> str:
        where = f"{self.source}: {self.key}" if self.key else self.source
        return f"{where}: {self.message}"


class ConfigError(ReasonixError):
    """The user's configuration is at fault: a file that does not parse, an unknown key, a value of the wrong type."""

    def __init__(self, problems: list[ConfigProblem]) -> None:
        if not problems:
            raise ValueError("a ConfigError needs at least one problem")
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    @property
    def source(self) -> str:
        return self.problems[0].source

    @property
    def key(self) -> str | None:
        return self.problems[0].key


class ReviewUnavailableError(ReasonixError):
    """Nobody can review the plan: no terminal to ask on, and ``--yes`` was not given. The message says what to run."""


class ReviewScriptExhaustedError(ReasonixError):
    """A scripted plan review was asked more often than its scenario has answers for: the scenario is at fault."""


class UsageError(ReasonixError):
    """The user is at fault: a bad combination or value of command-line options, or an objective that cannot be read."""
