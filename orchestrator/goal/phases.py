"""The goal loop as a state machine (DESIGN §5): its phases are values, and so is what each unit of work returns.

    Planning ─▶ Reviewing ─▶ Executing ⇄ (one step at a time) ─▶ Judging ─▶ Ended(complete | blocked)
                   ▲  │           │                                │
                   └──┘ revise    └─▶ Replanning ─▶ Executing      └─▶ Executing (the planner found work remaining)

Any phase may end the goal: :class:`Ended` carries the end state (``complete``, ``blocked``, ``paused``,
``failed``, ``cancelled``) and the reason shown to the user. A unit never raises to change the phase; it returns the
next one.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.events import EndState
from orchestrator.goal.tools import GoalVerdictArgs
from plans import Plan, Step


@dataclass(frozen=True, slots=True)
class Planning:
    """No plan yet: the planner makes the first one."""


@dataclass(frozen=True, slots=True)
class Reviewing:
    """A plan awaits the user's review (approved at once when there is no reviewer)."""


@dataclass(frozen=True, slots=True)
class Executing:
    """The next ready step runs (or, when every step is verified, the goal moves on to judging)."""


@dataclass(frozen=True, slots=True)
class Judging:
    """Every step is verified: the planner gives its verdict, or revises the plan if work remains."""


@dataclass(frozen=True, slots=True)
class Replanning:
    """A step is blocked or failed its verification too often: the planner revises the rest of the plan."""

    step: Step
    feedback: str
    blocked: bool


@dataclass(frozen=True, slots=True)
class Ended:
    """The goal stops here: finished, or paused (resumable)."""

    state: EndState
    reason: str


Phase = Planning | Reviewing | Executing | Judging | Replanning | Ended


@dataclass(frozen=True, slots=True)
class PlanAccepted:
    """The planner's turn ended with a valid plan (or revision)."""

    plan: Plan
    notes: tuple[str, ...] = ()
    """What the lenient reader had to fix in it."""


@dataclass(frozen=True, slots=True)
class VerdictGiven:
    """The planner's turn ended with a verdict on the whole goal instead of a plan."""

    verdict: GoalVerdictArgs


PlannerAnswer = PlanAccepted | VerdictGiven
