"""Building the pieces of a run from the configuration: the DeepSeek client, an executor session, and a
:class:`~orchestrator.goal.runner.GoalRunner` for a new or resumed goal (shared by ``goal`` / ``plan`` / ``exec`` and
``replay``, so a scenario replays the code path a user runs). Nothing here sends a request. The run id names the
journal directory only; it is never sent to the model (DESIGN §3.7), so a second run in the same workspace sends the
same prefix bytes and hits the cache from its first request."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.config.endpoints import DEFAULT_BASE_URL as DEFAULT_BASE_URL  # re-exported, as before
from orchestrator.config.endpoints import LOCAL_PLACEHOLDER_KEY as LOCAL_PLACEHOLDER_KEY
from orchestrator.config.endpoints import MissingApiKeyError as MissingApiKeyError
from orchestrator.config.endpoints import ModelChoiceError as ModelChoiceError
from orchestrator.config.endpoints import api_key_for as api_key_for
from orchestrator.config.endpoints import build_client as build_client
from orchestrator.config.endpoints import resolve_model as resolve_model
from orchestrator.config.endpoints import session_limits
from orchestrator.config.model import ResolvedConfig
from orchestrator.executor_prompt import EXECUTOR_RUN_SYSTEM
from orchestrator.policy.workspace_rule import WorkspaceError as WorkspaceError  # re-exported, as before
from orchestrator.policy.workspace_rule import check_workspace as check_workspace
from orchestrator.subagents.bundle import SessionExtensions
from orchestrator.subagents.task_tool import charge_to
from sessions import Session, SessionEvent, SessionSettings
from sessions.accounting import PriceBook, PriceError
from sessions.prompt import build_prefix, load_standing_memory, user_config_dir
from sessions.sandbox import NoSandbox, Sandbox
from sessions.tiers import tiered_registry
from sessions.tools import Gate, ToolContext, ToolRegistry, default_registry
from sessions.wire import DeepSeekClient, ReplySource, RequestGate

if TYPE_CHECKING:
    # The goal loop (and networkx with it) is imported by the functions that build a goal, not by this module: a
    # conversation, ``reasonix -p`` and the commands that only read runs never run a goal (issue 49).
    from orchestrator.config.model import Config
    from orchestrator.goal.runner import AnyEvent, GoalOptions, GoalRunner
    from orchestrator.mcp.hub import McpHub
    from orchestrator.review.reviewer import Reviewer
    from plans import Plan
    from sessions.permissions import Asker

EXECUTOR_SESSION = "executor"


@dataclass(frozen=True)
class RunOptions:
    """What ``reasonix run`` lets the user choose for one executor session."""

    model: str = "flash"
    """``flash``, ``pro`` (the configured ids) or any model id."""
    read_only: bool = False
    max_requests: int | None = None
    """Requests allowed for the task; ``None`` keeps the session default."""
    sandbox: Sandbox | None = None
    """What confines commands (default: no sandbox, the allowlisted environment only)."""
    gate: Gate | None = None
    """The permission gate consulted before each call."""
    mcp: McpHub | None = None
    """The MCP servers whose tools the session gets (opened around the run)."""


def run_dir(workspace: Path, run_id: str) -> Path:
    return workspace / ".reasonix" / "runs" / run_id


@dataclass(frozen=True)
class SessionBuilder:
    """The one place a session is built from configuration: the frozen prefix (system prompt, the registry's tool
    schemas, the standing memory of ``workspace`` and of ``memory_config_dir``), the client, the prices and the clock.
    ``reasonix run`` builds its executor with it, and a goal its planner and executor (resumed from their journals)."""

    workspace: Path
    client: DeepSeekClient
    price_book: PriceBook | None = None
    clock: Callable[[], datetime] | None = None
    memory_config_dir: Path | None = None
    """The user's config directory, for its memory files; ``None``: no user memory."""
    sandbox: Sandbox | None = None
    """What confines the session's commands (default: no sandbox, the allowlisted environment only)."""
    gate: Gate | None = None
    """The permission gate consulted before each call."""
    mcp: McpHub | None = None
    """MCP servers, opened before the first session is built: their tools join every session's registry (only the
    read-only ones for a read-only session such as the planner)."""

    def __call__(
        self,
        *,
        name: str,
        system_prompt: str,
        registry: ToolRegistry,
        settings: SessionSettings,
        journal_path: Path | None,
        on_event: Callable[[SessionEvent], None] | None = None,
        reply_source: ReplySource | None = None,
        resume: bool = False,
        root: Path | None = None,
        env: Mapping[str, str] | None = None,
        request_gate: RequestGate | None = None,
    ) -> Session:
        """A session; with ``resume``, an existing non-empty journal is continued instead of started anew. ``root``
        is where its tools work (default: the workspace; a parallel branch's copy of it for a fork), ``env`` what its
        commands' environment adds (a branch's import path)."""
        if self.mcp is not None and self.mcp.tools():
            extra = [t for t in self.mcp.tools() if t.read_only or not settings.read_only]
            registry = ToolRegistry([*registry, *extra])
        registry = tiered_registry(registry, settings.tiers, journal_path)  # + recall with tiers (DESIGN §3.6)
        memory = load_standing_memory(self.workspace, config_dir=self.memory_config_dir)
        prefix = build_prefix(system_prompt, Session.schemas_for(registry), memory)
        kwargs: dict[str, Any] = dict(
            name=name,
            client=self.client,
            registry=registry,
            tool_context=ToolContext(
                root=root or self.workspace, env=dict(env or {}), sandbox=self.sandbox or NoSandbox(), gate=self.gate
            ),
            settings=settings,
            on_event=on_event,
            price_book=self.price_book,
            clock=self.clock,
            reply_source=reply_source,
            request_gate=request_gate,
        )
        if resume and journal_path is not None and journal_path.exists() and journal_path.stat().st_size > 0:
            return Session.resume(journal_path=journal_path, prefix=prefix, **kwargs)
        return Session.start(journal_path=journal_path, prefix=prefix, **kwargs)


def build_executor(
    resolved: ResolvedConfig,
    workspace: Path,
    client: DeepSeekClient,
    *,
    journal_path: Path | None,
    options: RunOptions | None = None,
    on_event: Callable[[SessionEvent], None] | None = None,
    registry: ToolRegistry | None = None,
    reply_source: ReplySource | None = None,
    memory_config_dir: Path | None = None,
    resume: bool = False,
    system_prompt: str | None = None,
) -> Session:
    """An executor session with the frozen prefix of ``reasonix run``: the run prompt (``system_prompt``: the
    conversation's, with its output style), the built-in tools, and the standing memory of ``workspace`` (and of the
    user's config directory). With ``resume``, a non-empty journal at ``journal_path`` is continued."""
    options, system_prompt = options or RunOptions(), system_prompt or EXECUTOR_RUN_SYSTEM
    config = resolved.config
    model = resolve_model(config, options.model)
    price_book = config.price_book()
    try:
        if not price_book.is_unpriced(model):
            price_book.family_of(model)
    except PriceError as exc:
        raise ModelChoiceError(f"--model {options.model}: {exc}") from exc
    base = SessionSettings()
    settings = SessionSettings(
        model=model,
        thinking=config.thinking,
        reasoning_effort=config.reasoning_effort,
        read_only=options.read_only,
        max_requests_per_turn=options.max_requests or base.max_requests_per_turn,
        max_text_calls=config.repair.max_text_calls,
        **config.context.session_fields(),
        **session_limits(config, model),
    )
    config_dir = memory_config_dir or user_config_dir()
    builder = SessionBuilder(
        workspace,
        client,
        price_book=price_book,
        memory_config_dir=config_dir,
        sandbox=options.sandbox,
        gate=options.gate,
        mcp=options.mcp,
    )
    system_prompt, tools = SessionExtensions(config, workspace, config_dir).apply(  # unchanged with none configured
        system_prompt,
        registry or default_registry(web_fetch=config.tools.web_fetch),
        builder=builder,
        journal_path=journal_path,
        read_only=options.read_only,
        on_event=on_event,
    )
    session = builder(
        name=EXECUTOR_SESSION,
        system_prompt=system_prompt,
        registry=tools,
        settings=settings,
        journal_path=journal_path,
        on_event=on_event,
        reply_source=reply_source,
        resume=resume,
    )
    charge_to(tools, session)  # its subagents ask whatever budget the front end puts on it
    return session


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
    from orchestrator.config.endpoints import role_entries
    from orchestrator.config.providers import unpriced_budget_problem
    from orchestrator.goal.runner import GoalOptions
    from orchestrator.policy.budget import Budget
    from orchestrator.policy.escalation import EscalationPolicy

    escalation = EscalationPolicy.model_validate({"preset": preset})
    problem = unpriced_budget_problem(role_entries(config), budget_usd)
    if problem is not None:
        raise ModelChoiceError(problem)
    planner = resolve_model(config, config.roles.planner) if config.roles.planner else None
    flash = resolve_model(config, "flash")
    limits = session_limits(config, flash)  # the executor's entry's context window; every entry's max_output
    planner_window = session_limits(config, planner).get("context_window") if planner is not None else None
    fields: dict[str, object] = dict(
        **limits,
        **({"planner_context_window": planner_window} if planner_window is not None else {}),
        flash_model=flash,
        pro_model=resolve_model(config, "pro"),
        **({"planner_model": planner} if planner is not None else {}),
        thinking=config.thinking,
        reasoning_effort=config.reasoning_effort,
        escalation=escalation,
        budget=Budget(usd=budget_usd, requests=max_requests, minutes=max_minutes),
        retry_from_checkpoint=config.goal.retry_from_checkpoint,
        parallel=config.goal.parallel,
        max_text_calls=config.repair.max_text_calls,
        unattended=config.goal.unattended,
        context=config.context,
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
    sandbox: Sandbox | None = None,
    gate: Gate | None = None,
    mcp: McpHub | None = None,
    extensions: SessionExtensions | None = None,
) -> GoalRunner:
    """A new run. With ``plan`` (``reasonix exec``), the approved plan is the first revision and planning is skipped."""
    from orchestrator.goal.runner import GoalRunner
    from orchestrator.goal.store import GoalRecord, RunStore
    from plans import StepStatus

    store = RunStore.create(workspace, run_id)
    record = GoalRecord(
        run_id=store.run_id,
        objective=plan.objective if plan is not None else objective,
        settings=options.model_dump(),
        approved=plan is not None,  # a plan given by the user (``reasonix exec``) is approved; a planner's is not yet
    )
    if plan is not None:
        # The approved plan is the first revision; every step starts pending, whatever the file says.
        steps = tuple(s.model_copy(update={"status": StepStatus.PENDING}) for s in plan.steps)
        plan = plan.model_copy(update={"revision": 1, "steps": steps})
        store.save_plan(plan)
        record.plan = plan
        record.state = "executing"
    store.save(record)
    return GoalRunner(
        workspace=workspace,
        client=client,
        store=store,
        record=record,
        options=options,
        reviewer=reviewer,
        open_session=SessionBuilder(
            workspace, client, price_book, clock, config_dir, sandbox=sandbox, gate=gate, mcp=mcp
        ),
        on_event=on_event,
        sandbox=sandbox,
        extend=extensions.apply if extensions is not None else None,
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
    sandbox: Sandbox | None = None,
    gate: Gate | None = None,
    mcp: McpHub | None = None,
    extensions: SessionExtensions | None = None,
) -> GoalRunner:
    """An existing run, continued: both sessions are rebuilt from their journals at the next turn."""
    from orchestrator.goal.runner import GoalRunner
    from orchestrator.goal.store import RunStore
    from orchestrator.policy.budget import Budget

    store = RunStore.open(workspace, run_id)
    record = store.load()
    # A limit not given again on the command line keeps its value from the run's start.
    merged = options.budget.over(Budget.model_validate(record.settings.get("budget", {})))
    options = options.model_copy(update={"budget": merged})
    record.settings = options.model_dump()
    return GoalRunner(
        workspace=workspace,
        client=client,
        store=store,
        record=record,
        options=options,
        reviewer=reviewer,
        open_session=SessionBuilder(
            workspace, client, price_book, clock, config_dir, sandbox=sandbox, gate=gate, mcp=mcp
        ),
        on_event=on_event,
        sandbox=sandbox,
        extend=extensions.apply if extensions is not None else None,
    )


@dataclass(frozen=True)
class GoalSetup:
    """Everything a goal's runner needs from the configuration, except the client, the reviewer and the event sink:
    what ``reasonix goal`` and ``reasonix serve`` share (one place for presets, budgets, sandbox and permissions)."""

    workspace: Path
    resolved: ResolvedConfig
    options: GoalOptions
    sandbox: Sandbox
    gate: Gate
    notice: str | None
    """Say once before the run: no sandbox here, or full-access (``None``: nothing to say)."""
    mcp: McpHub
    config_dir: Path

    def runner_kwargs(
        self, client: DeepSeekClient, *, reviewer: Reviewer | None, on_event: Callable[[AnyEvent], None] | None
    ) -> dict[str, Any]:
        """The keyword arguments :func:`create_runner` and :func:`resume_runner` share."""
        return dict(
            workspace=self.workspace,
            client=client,
            options=self.options,
            reviewer=reviewer,
            on_event=on_event,
            config_dir=self.config_dir,
            price_book=self.resolved.config.price_book(),
            sandbox=self.sandbox,
            gate=self.gate,
            mcp=self.mcp,
            # the executor's task, skill and remember tools (DESIGN §5 "Extensions"); no jobs in a goal
            extensions=SessionExtensions(self.resolved.config, self.workspace, self.config_dir, jobs=False),
        )


def setup_goal(
    workspace: Path,
    *,
    env: Mapping[str, str],
    base_url: str | None = None,
    preset: str | None = None,
    budget_usd: float | None = None,
    max_requests: int | None = None,
    max_minutes: float | None = None,
    sandbox_mode: str | None = None,
    permissions: str | None = None,
    asker: Asker | None = None,
    on_notice: Callable[[str], None] | None = None,
    allow_unconfined_verify: bool = False,
    unattended: bool | None = None,
) -> GoalSetup:
    """The configuration of ``workspace`` (trust checked), the sandbox and permission gate, the goal options and the
    MCP hub (``preset`` ``None``: ``[goal] preset``). Raises :class:`~orchestrator.errors.ConfigError` or a pydantic
    ``ValidationError`` for a bad option."""
    from orchestrator.config.model import load_config
    from orchestrator.mcp.hub import McpHub
    from orchestrator.policy.commands import command_setup

    resolved = load_config(workspace=workspace, flags={"base_url": base_url}, env=env)
    commands = command_setup(resolved, workspace, sandbox_mode=sandbox_mode, permissions=permissions, asker=asker)
    options = goal_options(
        resolved.config,
        preset=preset or resolved.config.goal.preset,
        budget_usd=budget_usd,
        max_requests=max_requests,
        max_minutes=max_minutes,
        allow_unconfined_verify=allow_unconfined_verify,
        **({} if unattended is None else {"unattended": unattended}),
    )
    return GoalSetup(
        workspace=workspace,
        resolved=resolved,
        options=options,
        sandbox=commands.sandbox,
        gate=commands.gate,
        notice=commands.notice,
        mcp=McpHub(resolved.config.mcp, workspace, on_notice=on_notice, sandbox=resolved.config.sandbox_policy()),
        config_dir=user_config_dir(dict(env)),
    )
