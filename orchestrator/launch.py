"""Launching a goal or a conversation. For a goal, the one path from what a front end was asked for to a runner,
for ``reasonix goal`` / ``plan`` / ``exec`` (:mod:`orchestrator.cli.goal_command`), ``/plan`` and ``/goal`` in the
conversation (:mod:`orchestrator.repl.goals`) and ``reasonix serve`` (:mod:`orchestrator.serve.manager`).

A front end describes the launch as a :class:`GoalLaunch` (a frozen value, checked when it is made) and says how a
plan is reviewed there: a factory of reviewers, called only when a review is needed. Whether one is needed is one
rule, :attr:`orchestrator.goal.store.GoalRecord.needs_review` (a new goal, a run paused before or at its review, a
plan no review approved), which the goal loop also follows, so no front end can resume an unreviewed plan into
execution: when the factory cannot give a reviewer (no terminal, no ``--yes``) it raises, and nothing starts.
:func:`launch_goal` then loads the configuration (:func:`orchestrator.build.setup_goal`), checks the key, builds the
client and the runner, new or resumed. The resume command is :func:`orchestrator.goal.outcome.resume_command`.

Conversations have their own launch value, :class:`ConversationLaunch`, and :func:`open_conversation` is the one
function that assembles the executor conversation (:class:`orchestrator.conversation.ExecutorConversation`) for
``reasonix run``, ``code``, ``chat``, ``-p``, the Python API, ACP and a ``run`` scenario's replay: the configuration,
the sandbox, the permission gate and the hooks, the client, the MCP servers (the user's and any a client passed), the
budget, the turn checkpoints. Each front end parses its input into the launch value and renders the events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import httpx

from orchestrator.build import GoalSetup, build_client, create_runner, resume_runner, setup_goal
from orchestrator.config.durations import parse_duration
from orchestrator.config.endpoints import check_keys
from orchestrator.config.mcp import McpServerConfig
from orchestrator.config.model import ResolvedConfig
from orchestrator.errors import UsageError
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.mcp.hub import McpHub
from orchestrator.policy.commands import CommandSetup
from orchestrator.policy.limits import check_limits as check_limits  # re-exported, as before
from sessions.tools import Gate
from sessions.wire import DeepSeekClient, ReplySource

if TYPE_CHECKING:
    # Types only: the goal loop is imported with the runner :func:`launch_goal` builds, never by a conversation.
    from orchestrator.conversation.engine import ExecutorConversation
    from orchestrator.goal.context import GoalMode
    from orchestrator.goal.runner import AnyEvent, GoalRunner
    from orchestrator.review.reviewer import Reviewer
    from plans import Plan
    from sessions.permissions import Asker

ReviewerFactory: TypeAlias = "Callable[[GoalSetup], Reviewer]"
"""How a front end reviews plans: called (with the run's setup, for the cost estimate) only when a review is needed;
raises :class:`~orchestrator.errors.ReviewUnavailableError` when nobody can review there."""


@dataclass(frozen=True)
class GoalLaunch:
    """What to launch: a new goal (``objective``), an approved plan (``plan``, mode ``exec``) or a run to resume
    (``resume``, its id), and the options every front end may set. ``None`` leaves an option to the configuration
    (``preset``: the resumed run's own, else ``[goal] preset``; a limit: the resumed run's own, else none)."""

    workspace: Path
    """An existing directory, already resolved by the front end (each has its own rule for what it accepts)."""
    mode: GoalMode = "goal"
    objective: str = ""
    plan: Plan | None = None
    resume: str | None = None
    run_id: str | None = None
    """The id of a new run (``reasonix serve`` chooses it); ``None``: a new one."""
    preset: str | None = None
    budget_usd: float | None = None
    max_requests: int | None = None
    max_minutes: float | None = None
    base_url: str | None = None
    sandbox: str | None = None
    permissions: str | None = None
    allow_unconfined_verify: bool = False
    """``--allow-unconfined-verify``: without a sandbox, the plan's verify commands run on the host anyway."""
    unattended: bool | None = None
    """``--unattended`` (``None``: ``[goal] unattended``): nothing is asked, outages are waited out."""
    max_runtime_s: float | None = None
    """``--max-runtime`` in seconds (``None``: ``[goal] max_runtime``, else no limit); unattended runs only."""
    notify_cmd: str | None = None
    """``--notify-cmd`` (``None``: ``[goal] notify_cmd``); unattended runs only."""

    def __post_init__(self) -> None:
        check_limits(self.budget_usd, self.max_requests, self.max_minutes)
        if self.max_runtime_s is not None and not self.max_runtime_s > 0:
            raise UsageError("--max-runtime must be more than 0")
        if self.resume is None and self.plan is None and not self.objective.strip():
            raise UsageError('the objective is empty; say what to achieve, e.g. "add a test"')
        if self.resume is not None and (self.objective or self.plan is not None):
            raise UsageError("give an objective or --resume RUN_ID, not both")

    def previous(self) -> GoalRecord | None:
        """The resumed run's record (``None`` for a new run)."""
        return RunStore.open(self.workspace, self.resume).load() if self.resume is not None else None


def plan_estimate(setup: GoalSetup) -> Callable[[Plan], str]:
    """What a reviewer shows under a plan: the estimate of its cost against the run's budget."""
    from orchestrator.runs.estimate import estimate_plan

    book, options = setup.resolved.config.price_book(), setup.options

    def estimate(plan: Plan) -> str:
        return estimate_plan(setup.workspace, plan, model=options.flash_model, book=book).text(options.budget)

    return estimate


def needs_review(mode: GoalMode, previous: GoalRecord | None) -> bool:
    """Whether this launch must be able to review a plan: never for ``exec`` (its plan is the approved one), always
    for a new goal, and for a resumed run as its record says (:attr:`GoalRecord.needs_review`)."""
    if mode == "exec":
        return False
    return previous is None or previous.needs_review


@dataclass
class LaunchedGoal:
    """A runner ready to run, and what its front end shows or opens around it."""

    runner: GoalRunner
    setup: GoalSetup
    previous: GoalRecord | None
    launch: GoalLaunch

    @property
    def unattended(self) -> bool:
        return self.setup.options.unattended

    @property
    def max_runtime_s(self) -> float | None:
        """The unattended run's longest wall time, from the launch or else the configuration."""
        if self.launch.max_runtime_s is not None:
            return self.launch.max_runtime_s
        configured = self.setup.resolved.config.goal.max_runtime
        return parse_duration(configured) if configured is not None else None

    @property
    def notify_cmd(self) -> str | None:
        return self.launch.notify_cmd or self.setup.resolved.config.goal.notify_cmd

    @property
    def mcp(self) -> McpHub:
        """The MCP servers, to open around the run (their tools join both sessions)."""
        return self.setup.mcp


def launch_goal(
    launch: GoalLaunch,
    *,
    env: Mapping[str, str],
    reviewer: ReviewerFactory,
    on_event: Callable[[AnyEvent], None] | None = None,
    asker: Asker | None = None,
    on_notice: Callable[[str], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> LaunchedGoal:
    """The runner for ``launch`` (see the module's docstring). Raises :class:`~orchestrator.errors.ReasonixError`
    (a usage or configuration problem, a missing key, nobody to review) or a pydantic ``ValidationError`` for a bad
    option; nothing is sent and no run is created before every check passed."""
    previous = launch.previous()
    if previous is not None and previous.state == "complete":
        raise UsageError(f"the goal of run {launch.resume} is already complete; there is nothing to resume")
    setup = setup_goal(
        launch.workspace,
        env=env,
        base_url=launch.base_url,
        preset=launch.preset or (previous.preset if previous is not None else None),
        budget_usd=launch.budget_usd,
        max_requests=launch.max_requests,
        max_minutes=launch.max_minutes,
        sandbox_mode=launch.sandbox,
        permissions=launch.permissions,
        asker=asker,
        on_notice=on_notice,
        allow_unconfined_verify=launch.allow_unconfined_verify,
        unattended=launch.unattended,
    )
    check_keys(setup.resolved, env)  # a missing key is the first thing to fix, before review comes up
    chosen = reviewer(setup) if needs_review(launch.mode, previous) else None
    client = build_client(setup.resolved, transport=transport, env=env)
    common = setup.runner_kwargs(client, reviewer=chosen, on_event=on_event)
    if launch.resume is not None:
        runner = resume_runner(run_id=launch.resume, **common)
    else:
        runner = create_runner(objective=launch.objective.strip(), plan=launch.plan, run_id=launch.run_id, **common)
    return LaunchedGoal(runner=runner, setup=setup, previous=previous, launch=launch)


@dataclass(frozen=True)
class ConversationLaunch:
    """What to open: a conversation on ``workspace``, new or continued (``resume``: its run id), and the options
    every front end may set. ``None`` leaves an option to the configuration."""

    workspace: Path
    """An existing directory, already resolved by the front end."""
    model: str = "flash"
    """``flash``, ``pro`` (the configured ids) or any model id."""
    permissions: str | None = None
    """The approval mode (``ask``, ``auto``, ``read-only``; ``None``: ``[permissions] mode``, else
    ``default_permissions``)."""
    default_permissions: str = "auto"
    read_only: bool = False
    sandbox: str | None = None
    base_url: str | None = None
    resume: str | None = None
    """The run id of the conversation to continue (its journal must exist: the front end says what is missing)."""
    run_id: str | None = None
    """The id of a new conversation (a replay chooses it); ``None``: a new one."""
    pointer: tuple[str, str] | None = None
    """``(file, key)`` under ``.reasonix/`` where the front end keeps its latest conversation (``--continue``)."""
    max_requests: int | None = None
    """Requests allowed per turn; ``None`` keeps the session default."""
    max_budget_usd: float | None = None
    """No request is sent that could take the conversation (its subagents included) past this."""
    allowed_tools: frozenset[str] | None = None
    """Tool names that may run (others are refused; the tool list is unchanged); ``None``: every tool."""
    mcp_servers: Mapping[str, McpServerConfig] | None = None
    """MCP servers a client passes (ACP ``session/new``), beside the configured ones (a name taken is the client's)."""
    checkpoints: bool = True
    """Checkpoint the workspace around each turn that may write (``reasonix undo`` takes it back)."""
    chat: bool = False
    """``reasonix chat``: a session without tools (its own prefix), journaled in ``chat.jsonl``; never checkpointed."""
    strict_mcp: bool = False
    """Only ``mcp_servers`` (the client's), none of the configured ones (Claude Code's ``--strict-mcp-config``)."""
    caller_hooks: bool = False
    """A hook machinery even with no ``[[hooks]]``, for the caller to register its own (the SDKs' hook callbacks)."""

    def __post_init__(self) -> None:
        if self.max_requests is not None and self.max_requests < 1:
            raise UsageError("--max-requests must be at least 1")
        if self.max_budget_usd is not None and not self.max_budget_usd > 0:
            raise UsageError("--max-budget-usd must be above 0")


def open_conversation(
    launch: ConversationLaunch,
    *,
    env: Mapping[str, str],
    on_event: Callable[[Any], None] | None = None,
    asker: Asker | None = None,
    on_notice: Callable[[str], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    resolved: ResolvedConfig | None = None,
    commands: CommandSetup | None = None,
    client: DeepSeekClient | None = None,
    wrap_gate: Callable[[Gate], Gate] | None = None,
    system_prompt: Callable[[], str] | None = None,
    reply_source: ReplySource | None = None,
    memory_config_dir: Path | None = None,
    caller_mcp: Mapping[str, Callable[[], Any]] | None = None,
) -> ExecutorConversation:
    """The executor conversation for ``launch`` (see the module's docstring), its session not built yet: open it
    with ``async with conversation.opened():`` (the MCP servers start, then the session is built with their tools),
    or :meth:`~orchestrator.conversation.ExecutorConversation.start` it where no server is to be opened.

    ``resolved``, ``commands`` and ``client``: what a front end has made already (else made here from the launch);
    ``wrap_gate``: a gate of the front end's in front of the configured one (``reasonix code``'s custom commands);
    ``system_prompt``: the system prompt of each session it builds (``reasonix code``'s output style);
    ``caller_mcp``: MCP servers the caller serves itself, each with its transport (:mod:`orchestrator.mcp.caller`).
    Raises :class:`~orchestrator.errors.ReasonixError` for a configuration problem or a missing key; nothing is sent."""
    from orchestrator.checkpoints.turns import TurnCheckpoints
    from orchestrator.config.model import load_config
    from orchestrator.conversation.engine import ExecutorConversation
    from orchestrator.conversation.limits import AllowedTools
    from orchestrator.policy.commands import command_setup

    workspace = launch.workspace
    if resolved is None:
        resolved = load_config(workspace=workspace, flags={"base_url": launch.base_url}, env=env)
    if commands is None:
        commands = command_setup(
            resolved,
            workspace,
            sandbox_mode=launch.sandbox,
            permissions=launch.permissions,
            default_permissions=launch.default_permissions,  # type: ignore[arg-type]
            asker=asker,
            env=env,
            caller_hooks=launch.caller_hooks,
        )
    if client is None:
        client = build_client(resolved, transport=transport, env=env, model=launch.model)
    gate: Gate = commands.gate
    if wrap_gate is not None:
        gate = wrap_gate(gate)
    if launch.allowed_tools is not None:
        gate = AllowedTools(launch.allowed_tools, gate)
    config = resolved.config
    configured = {} if launch.strict_mcp else config.mcp.servers
    servers = {} if launch.chat else {**configured, **(launch.mcp_servers or {})}
    hub = None
    if servers or caller_mcp:
        mcp = config.mcp.model_copy(update={"servers": servers})
        hub = McpHub(mcp, workspace, on_notice=on_notice, sandbox=config.sandbox_policy(), callers=caller_mcp)
    read_only = launch.read_only or launch.permissions == "read-only"
    checkpoints = None
    if launch.checkpoints and not launch.chat:
        checkpoints = (
            TurnCheckpoints(workspace, notify=on_notice) if on_notice is not None else TurnCheckpoints(workspace)
        )
    return ExecutorConversation(
        workspace=workspace,
        resolved=resolved,
        commands=commands,
        client=client,
        gate=gate,
        mcp=hub,
        model=launch.model,
        read_only=read_only,
        max_requests=launch.max_requests,
        max_budget_usd=launch.max_budget_usd,
        resume=launch.resume,
        run_id=launch.run_id,
        pointer=launch.pointer,
        checkpoints=checkpoints,
        on_event=on_event,
        system_prompt=system_prompt,
        reply_source=reply_source,
        memory_config_dir=memory_config_dir,
        chat=launch.chat,
    )
