"""The supervisor's rules, each a small unit with no IO of its own beyond what it must do: escalation from flash to
pro (the ``<<<NEEDS_PRO>>>`` marker detector and the :class:`Escalator` reply source), goal budgets, the no-progress
(stuck) detector, running a step's verify commands, and where a session may not run (``workspace_rule``).
docs/DESIGN.md §5 states the rules these implement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.policy.budget import Budget, BudgetExceeded, BudgetTracker, BudgetUsage
    from orchestrator.policy.escalation import EscalationPolicy, Escalator
    from orchestrator.policy.marker import MarkerDetector, find_marker
    from orchestrator.policy.stuck import ProgressTracker, StuckVerdict, workspace_fingerprint
    from orchestrator.policy.verify import VerifyError, run_verify, verify_feedback

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetTracker",
    "BudgetUsage",
    "EscalationPolicy",
    "Escalator",
    "MarkerDetector",
    "ProgressTracker",
    "StuckVerdict",
    "VerifyError",
    "find_marker",
    "run_verify",
    "verify_feedback",
    "workspace_fingerprint",
]

_HOME = {
    "Budget": "budget",
    "BudgetExceeded": "budget",
    "BudgetTracker": "budget",
    "BudgetUsage": "budget",
    "EscalationPolicy": "escalation",
    "Escalator": "escalation",
    "MarkerDetector": "marker",
    "find_marker": "marker",
    "ProgressTracker": "stuck",
    "StuckVerdict": "stuck",
    "workspace_fingerprint": "stuck",
    "VerifyError": "verify",
    "run_verify": "verify",
    "verify_feedback": "verify",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
