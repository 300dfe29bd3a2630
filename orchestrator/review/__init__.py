"""Plan review: the reviewers a goal asks before anything changes (a person at the terminal, ``--yes``, or a
scenario's scripted answers), the decision they return (approve, revise with feedback, edit, cancel), and the round
trip of a plan through the user's ``$EDITOR`` as a commented JSON document.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value
