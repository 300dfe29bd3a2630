"""The executor conversation: one session of the executor, fed one user turn at a time, with everything a
conversation has around it whatever front end drives it (``reasonix run``, ``code``, ``chat``, ``-p``, the Python
API, ACP, a ``run`` scenario's replay). It is opened in one place, :func:`orchestrator.launch.open_conversation`;
front ends parse their input into a :class:`~orchestrator.launch.ConversationLaunch` and render its events.

What it holds:

* the session, built as ``reasonix run`` builds it (:func:`orchestrator.build.build_executor`: the same frozen
  prefix, so the same cached bytes from every front end), journaled in ``.reasonix/runs/<run id>/executor.jsonl``
  (:func:`conversation_journal`), resumed from it when asked;
* the hooks around each turn (:func:`orchestrator.hooks.turns.hooked_send`);
* the MCP servers (the user's, plus any a client passed), opened around it by :meth:`ExecutorConversation.opened`
  before the session is built, so their tools are in its prefix;
* the subagents of its ``task`` tool, asking the conversation's budget before each request
  (:func:`orchestrator.subagents.task_tool.charge_to`), their spending counted in its figures and their ends recorded
  in the run's ``events.jsonl``;
* a dollar cap (``max_budget_usd``) as the session's request gate, over its own and its subagents' spending;
* turn checkpoints (``reasonix undo`` takes a turn back) and the turn log (``/rewind``, ``reasonix code --resume``);
* its background jobs, killed when the session ends (:meth:`ExecutorConversation.close`).

A cancelled turn leaves the journal consistent; :meth:`ExecutorConversation.reopen` rebuilds the session from it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from orchestrator.build import ModelChoiceError, RunOptions, build_executor, run_dir
from orchestrator.checkpoints.turn_calls import Turn, TurnGate
from orchestrator.checkpoints.turns import TurnCheckpoints, TurnRef
from orchestrator.config.files import read_state_bytes
from orchestrator.config.model import ResolvedConfig
from orchestrator.config.providers import unpriced_problem
from orchestrator.conversation.chat import build_chat
from orchestrator.conversation.limits import BudgetCap
from orchestrator.conversation.turn_log import JOURNAL_NAME, TurnLog, TurnRecord
from orchestrator.events import SubagentFinished
from orchestrator.executor_prompt import EXECUTOR_RUN_SYSTEM
from orchestrator.goal.store import RunStore, new_run_id, run_state_dir, state_subdir
from orchestrator.hooks.turns import PromptBlocked, hooked_send
from orchestrator.policy.commands import CommandSetup
from orchestrator.subagents.runner import SESSION_PREFIX
from orchestrator.subagents.task_tool import subagent_figures
from orchestrator.summary import RunStatus, TaskSummary, figures
from plans import write_atomic
from sessions import Session, SessionEvent, TurnResult, UsageReported
from sessions.prompt import TailBlock
from sessions.tools import Gate
from sessions.tools.shell import jobs_of
from sessions.wire import DeepSeekClient, DeepSeekError, ReplySource, Usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from orchestrator.mcp.hub import McpHub

T = TypeVar("T")
CHAT_JOURNAL_NAME = "chat.jsonl"
MAX_FILES_KEPT = 8
"""Files a turn changed, named in its record (the picker of /rewind shows them)."""

Around = Callable[[Callable[[], Awaitable[T]]], Awaitable[T]]
"""What a front end wraps around the sending of a turn (``reasonix code``: the keys typed while it runs)."""


def conversation_journal(workspace: Path, run_id: str) -> Path:
    """Where the executor conversation ``run_id`` of ``workspace`` is journaled."""
    return run_dir(workspace, run_id) / JOURNAL_NAME


def last_conversation(workspace: Path, pointer: str, key: str) -> str | None:
    """The run id ``.reasonix/<pointer>`` names under ``key`` (the latest conversation of a front end), or None. The
    pointer is read through the gateway (:func:`~orchestrator.config.files.read_state_bytes`): a repository can ship
    ``.reasonix/``, so a link out of the workspace or a FIFO there reads as no conversation."""
    try:
        data = json.loads(read_state_bytes(workspace, workspace / ".reasonix" / pointer).decode("utf-8"))
    except (OSError, ValueError):
        return None
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


class ExecutorConversation:
    """One executor conversation; made by :func:`orchestrator.launch.open_conversation` (see the module's docstring).
    The session is built by :meth:`start` (or :meth:`opened`, which opens the MCP servers first)."""

    def __init__(
        self,
        *,
        workspace: Path,
        resolved: ResolvedConfig,
        commands: CommandSetup,
        client: DeepSeekClient,
        gate: Gate,
        mcp: McpHub | None,
        model: str = "flash",
        read_only: bool = False,
        max_requests: int | None = None,
        max_budget_usd: float | None = None,
        resume: str | None = None,
        run_id: str | None = None,
        pointer: tuple[str, str] | None = None,
        checkpoints: TurnCheckpoints | None = None,
        on_event: Callable[[SessionEvent | SubagentFinished], None] | None = None,
        system_prompt: Callable[[], str] | None = None,
        reply_source: ReplySource | None = None,
        memory_config_dir: Path | None = None,
        chat: bool = False,
    ) -> None:
        self.workspace = workspace
        self.chat = chat
        """A chat (``reasonix chat``): a session without tools, journaled in ``chat.jsonl``."""
        self.resolved = resolved
        self.commands = commands
        self.client = client
        self.gate = gate
        self.mcp = mcp
        self.model = model
        self.read_only = read_only
        self.max_requests = max_requests
        self.max_budget_usd = max_budget_usd
        self.pointer = pointer
        self.checkpoints = checkpoints
        self.on_event = on_event
        self._system_prompt = system_prompt or (lambda: EXECUTOR_RUN_SYSTEM)
        self._reply_source = reply_source
        self._memory_config_dir = memory_config_dir
        self._first = (resume, run_id)
        self.run_id = resume or run_id or ""
        self.resumed = resume is not None
        self.events: RunStore | None = None
        """The run's ``events.jsonl``: each subagent's end, for ``reasonix runs show``."""
        self.subagent_requests = 0
        self.subagent_cost_usd = 0.0
        self.subagent_usage = Usage()
        """What the ``task`` tool's subagents spent in this process, across every session of the conversation."""
        self._session: Session | None = None
        self._turn: Turn | None = None
        """The turn being sent, told of each tool call before it runs (its checkpoints)."""

    # ------------------------------------------------------------------------------------------------ sessions

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the conversation's session is not built yet: start() it (or open it with opened())")
        return self._session

    @property
    def started(self) -> bool:
        return self._session is not None

    @property
    def journal_path(self) -> Path:
        if self.chat:
            return run_dir(self.workspace, self.run_id) / CHAT_JOURNAL_NAME
        return conversation_journal(self.workspace, self.run_id)

    @property
    def turn_log(self) -> TurnLog:
        return TurnLog(run_dir(self.workspace, self.run_id))

    @property
    def hooks(self) -> Any:
        return self.commands.hooks

    def start(self) -> Session:
        """Build the session (the MCP servers' tools join it only when they were opened first: :meth:`opened`)."""
        if self._session is None:
            resume, run_id = self._first
            self._session = self._open(resume=resume is not None, run_id=resume or run_id)
        return self._session

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[ExecutorConversation]:
        """The MCP servers open, then the session built (their tools in its prefix); everything closed at the end."""
        try:
            if self.mcp is not None:
                async with self.mcp.open():
                    self.start()
                    yield self
            else:
                self.start()
                yield self
        finally:
            self.close()

    def _open(self, *, resume: bool, run_id: str | None) -> Session:
        self.run_id = run_id if run_id is not None else new_run_id()
        run_state_dir(self.workspace, self.run_id)  # the key is there: from here on the run is journaled
        if self.pointer is not None:
            name, key = self.pointer
            write_atomic(state_subdir(self.workspace) / name, json.dumps({key: self.run_id}) + "\n")
        if self.events is not None:
            self.events.close()
        self.events = RunStore(self.workspace, self.run_id)
        hooks = self.commands.hooks
        if hooks is not None:
            hooks.run_id = hooks.session_id = self.run_id
            hooks.transcript_path = str(self.journal_path)
        if self.chat:
            session = build_chat(
                self.resolved,
                self.workspace,
                self.client,
                model=self.model,
                journal_path=self.journal_path,
                on_event=self._event,
                resume=resume,
                system_prompt=self._system_prompt(),
            )
        else:
            session = self._build_executor(resume)
        if self.max_budget_usd is not None:
            model, budget = session.settings.model, self.max_budget_usd
            problem = unpriced_problem([model] if session.ledger.price_book.is_unpriced(model) else [], budget)
            if problem is not None:  # an unpriced model counts every request as $0: the cap would never hold
                raise ModelChoiceError(problem)
            session.in_flight.gate = BudgetCap(self.max_budget_usd, lambda: self.spent_usd)
        self._spent_before = self.spent_usd if self._session is not None else 0.0
        self._session_base = session.cost_usd
        return session

    def _build_executor(self, resume: bool) -> Session:
        return build_executor(
            self.resolved,
            self.workspace,
            self.client,
            journal_path=self.journal_path,
            options=RunOptions(
                model=self.model,
                read_only=self.read_only,
                max_requests=self.max_requests,
                sandbox=self.commands.sandbox,
                gate=TurnGate(self.gate, lambda: self._turn) if self.checkpoints is not None else self.gate,
                mcp=self.mcp,
            ),
            on_event=self._event,
            reply_source=self._reply_source,
            memory_config_dir=self._memory_config_dir,
            resume=resume,
            system_prompt=self._system_prompt(),
        )

    def _event(self, event: SessionEvent | SubagentFinished) -> None:
        """Every event goes to the front end; a subagent's requests count in the conversation's figures, and its
        end is recorded in the run's ``events.jsonl``."""
        if isinstance(event, SubagentFinished) and self.events is not None:
            self.events.append_event(event.model_dump(mode="json"))
        elif isinstance(event, UsageReported) and event.session.startswith(SESSION_PREFIX):
            self.subagent_requests += 1
            self.subagent_cost_usd += event.cost_usd
            self.subagent_usage = self.subagent_usage + event.usage
        if self.on_event is not None:
            self.on_event(event)

    @property
    def spent_usd(self) -> float:
        """What this conversation spent in this process: its sessions' requests and its subagents'."""
        if self._session is None:
            return 0.0
        return self._spent_before + self._session.cost_usd - self._session_base + self.subagent_cost_usd

    def close_session(self) -> None:
        """The session ends: its journal is closed and its background jobs are killed."""
        if self._session is None:
            return
        jobs = jobs_of(self._session.registry)
        if jobs is not None:
            jobs.close()
        if self._session.journal is not None:
            self._session.journal.close()

    def close(self) -> None:
        """The conversation ends: the session as :meth:`close_session`, and the run's events file."""
        self.close_session()
        if self.events is not None:
            self.events.close()

    def restart(self) -> Session:
        """A new conversation (a new run and journal; ``/clear``); the old one stays on disk."""
        self.close_session()
        spent = self.spent_usd
        self._session = self._open(resume=False, run_id=None)
        self._spent_before = spent
        return self._session

    def reopen(self, run_id: str | None = None, *, keep_totals: bool = False) -> Session:
        """Rebuild the session from its journal (after a cancelled turn: the journal mends what was cut off; after a
        rewind or a fork: the journal cut or copied). ``keep_totals``: the session's ledger keeps what this process
        spent. The old session's background jobs die with it."""
        old = self.session
        spent = self.spent_usd
        self.close_session()
        self._session = self._open(resume=True, run_id=run_id or self.run_id)
        self._spent_before = spent
        # Nothing was resumed: the same process goes on, and the server still caches what it was sent. The rebuilt
        # session's tracker would explain the next request as the first after a resume; this one expects the hits.
        self._session.ledger.tracker = old.ledger.tracker
        if keep_totals:
            new = self._session.ledger
            new.requests, new.usage, new.cost_usd = old.ledger.requests, old.ledger.usage, old.ledger.cost_usd
            self._session_base = new.cost_usd
        return self._session

    # ------------------------------------------------------------------------------------------------ turns

    async def send(
        self,
        text: str,
        *,
        tail: Sequence[TailBlock] = (),
        model: str | None = None,
        max_requests: int | None = None,
        note: str | None = None,
        sent_mode: str | None = None,
        checkpoint: bool = True,
        around: Around[TurnResult | PromptBlocked] | None = None,
    ) -> TurnResult | PromptBlocked:
        """One user turn with the hooks around it, checkpointed by what it did (unless the session is read-only or
        ``checkpoint`` is false: :class:`~orchestrator.checkpoints.turn_calls.Turn`, told of each call by the gate)
        and recorded in the turn log. Errors and cancellation
        propagate; the checkpoint and the record are taken all the same."""
        session = self.session
        number = len(self.turn_log.read()) + 1
        offset = self.journal_path.stat().st_size if self.journal_path.exists() else 0
        writes = checkpoint and not session.settings.read_only and self.checkpoints is not None
        turn = None
        try:
            if writes:
                assert self.checkpoints is not None
                turn = self._turn = self.checkpoints.begin()
                if turn is not None and self._commands_outside_calls(session):
                    await turn.scan()
            first = not session.log.messages

            def go() -> Awaitable[TurnResult | PromptBlocked]:
                return hooked_send(
                    session, text, hooks=self.hooks, tail=tail, model=model, first=first, max_requests=max_requests
                )

            return await (around(go) if around is not None else go())
        finally:
            self._turn = None
            ref = None
            if self.checkpoints is not None:
                ref = await self.checkpoints.finish(turn, run_id=self.run_id, number=number, note=note or text)
            self._record(TurnRecord(number=number, text=note or text, offset=offset, sent_mode=sent_mode), ref)

    def _commands_outside_calls(self, session: Session) -> bool:
        """Something may write during the turn without a tool call naming it: a hook (any configured), or a
        background job still running. The whole workspace is then stored before the turn, as for a command."""
        jobs = jobs_of(session.registry)
        return bool(self.hooks) or (jobs is not None and bool(jobs.running()))

    def _record(self, record: TurnRecord, ref: TurnRef | None) -> None:
        if ref is not None:
            from orchestrator.checkpoints.ledger import Ledger

            entries = Ledger(self.workspace).read()
            changes = next((cp.changes for cp in entries if cp.seq == ref.seq + 1 and cp.run_id == ref.run_id), ())
            files = tuple(f"{c.status} {c.path}" for c in changes[:MAX_FILES_KEPT])
            record = record.model_copy(update={"run_id": ref.run_id, "step_id": ref.step_id, "seq": ref.seq})
            record = record.model_copy(update={"files": files})
        self.turn_log.append(record)


# ---------------------------------------------------------------------------------------------------- one task


async def run_task(conversation: ExecutorConversation, task: str) -> TaskSummary:
    """``reasonix run``: one turn on ``task`` and its summary. A DeepSeek error ends it with status ``error``;
    cancellation propagates (the journal stays consistent), after which :func:`task_summary` still reports what
    was spent."""
    try:
        result = await conversation.send(task, max_requests=conversation.max_requests)
    except DeepSeekError as exc:
        return task_summary(conversation, "error", error=str(exc))
    if isinstance(result, PromptBlocked):
        return task_summary(conversation, "error", error=f"a user_prompt hook blocked the task: {result.reason}")
    return task_summary(conversation, result.status, text=result.text)


def task_summary(
    conversation: ExecutorConversation, status: RunStatus, *, text: str = "", error: str | None = None
) -> TaskSummary:
    """The summary of a one-task conversation: its figures summed over every request, its subagents' included."""
    session = conversation.session
    return TaskSummary(
        command="run",
        run_id=conversation.run_id,
        status=status,
        ok=status == "done",
        text=text,
        error=error,
        model=session.settings.model,
        journal=str(conversation.journal_path),
        **figures(
            {
                session.name: (session.requests, session.usage, session.cost_usd),
                **subagent_figures(session.registry),
            }
        ),
    )
