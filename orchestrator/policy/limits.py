"""The limits a goal's command line may set (``--budget-usd``, ``--max-requests``, ``--max-minutes``), checked before
anything else: a module of its own, importing nothing heavy, so that ``reasonix goal --budget-usd 0 x`` answers
before the goal machinery is imported (issue 49)."""

from __future__ import annotations

from orchestrator.errors import UsageError


def check_limits(budget_usd: float | None, max_requests: int | None, max_minutes: float | None) -> None:
    """:class:`UsageError` for a limit that is not positive."""
    if budget_usd is not None and not budget_usd > 0:
        raise UsageError("--budget-usd must be more than 0")
    if max_requests is not None and max_requests < 1:
        raise UsageError("--max-requests must be at least 1")
    if max_minutes is not None and not max_minutes > 0:
        raise UsageError("--max-minutes must be more than 0")
