"""Building a :class:`~orchestrator.goal.GoalRunner` for a new run or a resumed one.

Shared by ``reasonix goal`` / ``plan`` / ``exec`` and by ``reasonix replay``, so a scenario replays the same code path
a user runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from orchestrator.budget import Budget
from orchestrator.config import Config
from orchestrator.escalation import EscalationPolicy
from orchestrator.goal import AnyEvent, GoalOptions, GoalRunner
from orchestrator.review import Reviewer
from orchestrator.run_store import GoalRecord, RunStore
from plans.schema import Plan
from sessions.client import DeepSeekClient
from sessions.prices import PriceBook


def goal_options(
    config: Config,
    *,
    preset: str = "auto",
    budget_usd: float | None = None,
    max_requests: int | None = None,
    max_minutes: float | None = None,
    **overrides: object,
) -> GoalOptions:
    """Options from the configuration and the command line (flags win)."""
    escalation = EscalationPolicy.model_validate({"preset": preset})
    fields: dict[str, object] = dict(
        flash_model=config.models.flash,
        pro_model=config.models.pro,
        thinking=config.thinking,
        reasoning_effort=config.reasoning_effort,
        escalation=escalation,
        budget=Budget(usd=budget_usd, requests=max_requests, minutes=max_minutes),
    )
    fields.update(overrides)
    return GoalOptions.model_validate(fields)


def create_runner(
    *,
    workspace: Path,
    client: DeepSeekClient,
    objective: str,
    options: GoalOptions,
    reviewer: Reviewer | None,
    on_event: Callable[[AnyEvent], None] | None = None,
    run_id: str | None = None,
    config_dir: Path | None = None,
    price_book: PriceBook | None = None,
    clock: Callable[[], datetime] | None = None,
    plan: Plan | None = None,
) -> GoalRunner:
    """A new run. With ``plan`` (``reasonix exec``), the approved plan is the first revision and planning is skipped."""
    store = RunStore.create(workspace, run_id)
    record = GoalRecord(
        run_id=store.run_id, objective=plan.objective if plan is not None else objective, settings=options.model_dump()
    )
    if plan is not None:
        plan = plan.model_copy(update={"revision": 1})
        store.save_plan(plan)
        record.plan_revision = 1
        record.state = "executing"
    store.save(record)
    return GoalRunner(
        workspace=workspace,
        client=client,
        store=store,
        record=record,
        options=options,
        reviewer=reviewer,
        on_event=on_event,
        price_book=price_book,
        clock=clock,
        config_dir=config_dir,
    )


def resume_runner(
    *,
    workspace: Path,
    client: DeepSeekClient,
    run_id: str,
    options: GoalOptions,
    reviewer: Reviewer | None,
    on_event: Callable[[AnyEvent], None] | None = None,
    config_dir: Path | None = None,
    price_book: PriceBook | None = None,
    clock: Callable[[], datetime] | None = None,
) -> GoalRunner:
    """An existing run, continued: both sessions are rebuilt from their journals at the next turn."""
    store = RunStore.open(workspace, run_id)
    record = store.load()
    # A limit not given again on the command line keeps its value from the run's start.
    previous = Budget.model_validate(record.settings.get("budget", {}))
    given = options.budget
    merged = Budget(
        usd=given.usd if given.usd is not None else previous.usd,
        requests=given.requests if given.requests is not None else previous.requests,
        minutes=given.minutes if given.minutes is not None else previous.minutes,
    )
    options = options.model_copy(update={"budget": merged})
    record.settings = options.model_dump()
    return GoalRunner(
        workspace=workspace,
        client=client,
        store=store,
        record=record,
        options=options,
        reviewer=reviewer,
        on_event=on_event,
        price_book=price_book,
        clock=clock,
        config_dir=config_dir,
    )
