"""Plan review: the reviewers a goal asks before anything changes (a person at the terminal, ``--yes``, or a
scenario's scripted answers), the decision they return (approve, revise with feedback, edit, cancel), and the round
trip of a plan through the user's ``$EDITOR`` as a commented JSON document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.review.editor import PlanDocumentError, edit_plan
    from orchestrator.review.reviewer import (
        AutoApprove,
        ReviewDecision,
        Reviewer,
        ScriptedReviewer,
        TerminalReviewer,
        make_reviewer,
        require_interactive,
    )

__all__ = [
    "AutoApprove",
    "PlanDocumentError",
    "ReviewDecision",
    "Reviewer",
    "ScriptedReviewer",
    "TerminalReviewer",
    "edit_plan",
    "make_reviewer",
    "require_interactive",
]

_HOME = {
    "PlanDocumentError": "editor",
    "edit_plan": "editor",
    "AutoApprove": "reviewer",
    "ReviewDecision": "reviewer",
    "Reviewer": "reviewer",
    "ScriptedReviewer": "reviewer",
    "TerminalReviewer": "reviewer",
    "make_reviewer": "reviewer",
    "require_interactive": "reviewer",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
