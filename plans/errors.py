"""What goes wrong with plan documents, named for who is at fault.

* :class:`PlanValidationError`: the plan itself is wrong (a cycle, an unknown dependency, ...). It carries every
  :class:`PlanIssue` found, not just the first, so the planner can fix them all in one turn.
* :class:`PlanRevisionError`: a revision tried to change or drop a step that is already done.
* :class:`PlanReadError`: a model-made plan could not be understood at all; its message is written for the model.
* :class:`PlanStorageError`: a plan file is missing, unreadable, or would overwrite a different revision.
* :class:`PlanFileError` (a :class:`PlanStorageError`): a file is not a plan, for any reason; the one error of
  :mod:`plans.loader`, used by every command that reads a plan file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class IssueCode(StrEnum):
    NO_STEPS = "no_steps"
    DUPLICATE_ID = "duplicate_id"
    SELF_DEPENDENCY = "self_dependency"
    UNKNOWN_DEPENDENCY = "unknown_dependency"
    CYCLE = "cycle"
    WRITE_CONFLICT = "write_conflict"
    DONE_STEP_CHANGED = "done_step_changed"
    DONE_STEP_DROPPED = "done_step_dropped"
    SCHEMA = "schema"


@dataclass(frozen=True, slots=True)
class PlanIssue:
    """One thing wrong with a plan. ``steps`` names the step ids involved, in a meaningful order (a cycle's path)."""

    code: IssueCode
    message: str
    steps: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message


class PlanError(Exception):
    """Base of every error raised by ``plans``."""


def _bullets(issues: Sequence[PlanIssue]) -> str:
    return "\n".join(f"- {issue.message}" for issue in issues)


class PlanValidationError(PlanError):
    """The plan is not a valid dependency DAG. ``issues`` lists every problem found."""

    def __init__(self, issues: Sequence[PlanIssue], headline: str = "the plan is invalid") -> None:
        self.issues: tuple[PlanIssue, ...] = tuple(issues)
        self.headline = headline
        count = len(self.issues)
        super().__init__(f"{headline} ({count} problem{'s' if count != 1 else ''}):\n{_bullets(self.issues)}")


class PlanRevisionError(PlanValidationError):
    """A revision broke the rule that done steps are history: it changed or dropped one (the issues say which)."""

    def __init__(self, issues: Sequence[PlanIssue]) -> None:
        super().__init__(issues, headline="the revision was rejected")


class PlanReadError(PlanError):
    """A model-made plan could not be understood. ``str(error)`` is written for the model to correct itself."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__(
            "Your plan could not be read:\n"
            + "\n".join(f"- {p}" for p in self.problems)
            + "\nFix these and submit the whole plan again."
        )


class PlanStorageError(PlanError):
    """A plan file could not be read or written (the message names the file and what to do)."""


class PlanFileError(PlanStorageError):
    """A plan file cannot be read, or is not a (valid) plan. The message names the file and every problem.

    ``unreadable``: the file could not be opened at all (the commands exit 2 for it, 1 for the rest); ``graph``: it is
    a plan document whose dependency graph is invalid.
    """

    def __init__(self, path: object, message: str, *, unreadable: bool = False, graph: bool = False) -> None:
        self.path = path
        self.unreadable = unreadable
        self.graph = graph
        super().__init__(message)

    @classmethod
    def invalid(cls, path: object, *problems: str) -> PlanFileError:
        """``<path> is not a valid plan document: <problem>``, or one ``- problem`` line each when there are several."""
        if len(problems) == 1:
            return cls(path, f"{path} is not a valid plan document: {problems[0]}")
        return cls(path, f"{path} is not a valid plan document:\n" + "\n".join(f"- {p}" for p in problems))
