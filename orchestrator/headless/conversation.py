"""One headless conversation: an executor session built exactly as ``reasonix run`` builds it (the same prefix, so
the same cached bytes), fed user messages one turn at a time, every session event turned into stream-json lines
(:mod:`orchestrator.headless.translate`) and handed to ``on_event``. ``reasonix -p``, the Python API
(:mod:`orchestrator.api`) and the ACP server (:mod:`orchestrator.acp`) all drive this class.

The conversation's id is its run id (``.reasonix/runs/<id>/executor.jsonl``): ``resume_id`` continues that journal,
and :func:`last_conversation` names the workspace's latest one (``--continue``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.build import ModelChoiceError, RunOptions, build_executor, run_dir
from orchestrator.config.files import read_state_bytes
from orchestrator.config.model import ResolvedConfig
from orchestrator.config.providers import unpriced_problem
from orchestrator.errors import ReasonixError
from orchestrator.goal.store import check_run_id, new_run_id, run_state_dir, state_subdir
from orchestrator.headless.events import (
    ModelUsage,
    ResultLine,
    ResultSubtype,
    StreamJsonEvent,
    SystemInit,
    TokenUsage,
    reasonix_version,
)
from orchestrator.headless.limits import AllowedTools, BudgetCap, MaxBudgetReachedError
from orchestrator.headless.translate import Translator
from orchestrator.subagents.task_tool import subagent_figures
from orchestrator.summary import ratio
from plans import write_atomic
from sessions import RequestStarted, Session, SessionEvent, UsageReported
from sessions.prompt import TailBlock
from sessions.sandbox import Sandbox
from sessions.tools import Gate
from sessions.tools.shell import jobs_of
from sessions.wire import DeepSeekClient, DeepSeekError, Usage

LAST_FILE = "headless.json"
"""Under ``.reasonix/``: the id of the workspace's latest headless conversation, for ``--continue``."""

CLAUDE_MODES = {"ask": "default", "auto": "auto", "read-only": "plan"}
"""Reasonix's approval modes by Claude Code's names (the ``permissionMode`` of the ``init`` line)."""

SUBTYPES: dict[str, ResultSubtype] = {
    "done": "success",
    "request_limit": "error_max_turns",
    "budget": "error_max_budget_usd",
}


class NoConversationError(ReasonixError):
    """The user is at fault: ``--resume ID`` names no conversation, or ``--continue`` finds none."""


@dataclass(frozen=True)
class HeadlessOptions:
    """What a headless conversation may do: the model, and the limits of ``reasonix -p``."""

    model: str = "flash"
    read_only: bool = False
    max_turns: int | None = None
    """Requests to the model allowed over the whole conversation (this process)."""
    max_budget_usd: float | None = None
    allowed_tools: frozenset[str] | None = None
    """Tool names that may run; ``None``: every tool (the gate's rules still apply)."""
    permission_mode: str = "auto"


def last_conversation(workspace: Path) -> str | None:
    try:
        data = json.loads(read_state_bytes(workspace, workspace / ".reasonix" / LAST_FILE).decode("utf-8"))
    except (OSError, ValueError):
        return None
    found = data.get("session_id") if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


class HeadlessConversation:
    """An executor session and the stream-json lines it makes. Build it inside the client's ``async with``."""

    def __init__(
        self,
        *,
        workspace: Path,
        resolved: ResolvedConfig,
        client: DeepSeekClient,
        on_event: Callable[[StreamJsonEvent], None],
        options: HeadlessOptions | None = None,
        sandbox: Sandbox | None = None,
        gate: Gate | None = None,
        resume_id: str | None = None,
        mcp: object | None = None,
    ) -> None:
        self.workspace = workspace
        self.options = options or HeadlessOptions()
        self.on_event = on_event
        self.resumed = resume_id is not None
        if resume_id is not None:
            try:
                check_run_id(resume_id)
            except ReasonixError as exc:
                raise NoConversationError(f"--resume {resume_id!r}: {exc}") from None
            if not (run_dir(workspace, resume_id) / "executor.jsonl").is_file():
                raise NoConversationError(
                    f"there is no conversation {resume_id!r} in {workspace} (no .reasonix/runs/{resume_id}/"
                    "executor.jsonl); take the session_id of an earlier run's result, or drop --resume"
                )
        self.session_id = resume_id or new_run_id()
        run_state_dir(workspace, self.session_id)
        write_atomic(state_subdir(workspace) / LAST_FILE, json.dumps({"session_id": self.session_id}) + "\n")
        self.journal_path = run_dir(workspace, self.session_id) / "executor.jsonl"
        self._translate = Translator(self.session_id)
        self._api_started: float | None = None
        self._turn_started: float | None = None
        self.turn_running = False
        """A turn was started and has not ended (it is cut off when a cancellation leaves :meth:`send`)."""
        self.api_seconds = 0.0
        if self.options.allowed_tools is not None:
            gate = AllowedTools(self.options.allowed_tools, gate)
        self.session: Session = build_executor(
            resolved,
            workspace,
            client,
            journal_path=self.journal_path,
            options=RunOptions(
                model=self.options.model,
                read_only=self.options.read_only,
                sandbox=sandbox,
                gate=gate,
                mcp=mcp,  # type: ignore[arg-type]
            ),
            on_event=self._session_event,
            resume=self.resumed,
        )
        self._base = (self.session.requests, self.session.usage, self.session.cost_usd)
        model, budget = self.session.settings.model, self.options.max_budget_usd
        problem = unpriced_problem([model] if self.session.ledger.price_book.is_unpriced(model) else [], budget)
        if problem is not None:
            raise ModelChoiceError(problem)
        if self.options.max_budget_usd is not None:
            self.session.in_flight.gate = BudgetCap(self.options.max_budget_usd, lambda: self.cost_usd)

    # ------------------------------------------------------------------------------------------------ figures

    @property
    def requests(self) -> int:
        return self.session.requests - self._base[0]

    @property
    def usage(self) -> Usage:
        base, now = self._base[1], self.session.usage
        return Usage(
            prompt_tokens=now.prompt_tokens - base.prompt_tokens,
            completion_tokens=now.completion_tokens - base.completion_tokens,
            total_tokens=now.total_tokens - base.total_tokens,
            prompt_cache_hit_tokens=now.prompt_cache_hit_tokens - base.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens=now.prompt_cache_miss_tokens - base.prompt_cache_miss_tokens,
        )

    @property
    def cost_usd(self) -> float:
        """What this conversation spent in this process: its own requests and its subagents' (``total_cost_usd``)."""
        return self.session.cost_usd + self.subagent_cost_usd - self._base[2]

    @property
    def subagent_cost_usd(self) -> float:
        """What the ``task`` tool's subagents spent in this process (their sessions are built anew by each)."""
        return sum(cost for _, _, cost in subagent_figures(self.session.registry).values())

    # ------------------------------------------------------------------------------------------------ events

    def _session_event(self, event: SessionEvent) -> None:
        if isinstance(event, RequestStarted):
            self._api_started = trio.current_time()
        elif isinstance(event, UsageReported) and self._api_started is not None:
            self.api_seconds += trio.current_time() - self._api_started
            self._api_started = None
        for line in self._translate(event):
            self.on_event(line)

    def init_event(self) -> SystemInit:
        mode = "read-only" if self.options.read_only else self.options.permission_mode
        return SystemInit(
            session_id=self.session_id,
            cwd=str(self.workspace),
            model=self.session.settings.model,
            tools=[tool.name for tool in self.session.registry],
            permission_mode=CLAUDE_MODES.get(mode, mode),
            approval_mode=mode,
            resumed=self.resumed,
            journal=str(self.journal_path),
            claude_code_version=reasonix_version(),
        )

    # ------------------------------------------------------------------------------------------------ turns

    async def send(self, text: str, *, tail: Sequence[TailBlock] = ()) -> ResultLine:
        """One user turn to its end, then its ``result`` line (also given to ``on_event``). A DeepSeek error or a
        reached limit ends the turn with an error result; cancellation propagates (the journal stays consistent,
        :meth:`result` still reports what was spent)."""
        started = self._turn_started = trio.current_time()
        limit = self.options.max_turns
        remaining = None if limit is None else limit - self.requests
        if remaining is not None and remaining < 1:
            result = self.result("request_limit", f"the run used all {limit} turns (--max-turns)", started)
        else:
            self.turn_running = True
            try:
                turn = await self.session.send(text, tail=tail, max_requests=remaining)
            except MaxBudgetReachedError as exc:
                result = self.result("budget", str(exc), started)
            except DeepSeekError as exc:
                result = self.result("error", str(exc), started)
            else:
                result = self.result(turn.status, turn.text, started)
            self.turn_running = False
        self.on_event(result)
        return result

    def result(self, status: str, text: str, started: float | None = None) -> ResultLine:
        """The ``result`` line for a turn that ended with ``status``: the figures of this conversation so far (this
        process), as the server reported them."""
        started = started if started is not None else self._turn_started
        try:
            now = trio.current_time()
        except RuntimeError:  # outside trio (after the run): no duration to measure
            now = started = 0.0
        usage = self.usage
        settings = self.session.settings
        figures = ModelUsage(
            inputTokens=usage.prompt_cache_miss_tokens,
            outputTokens=usage.completion_tokens,
            cacheReadInputTokens=usage.prompt_cache_hit_tokens,
            costUSD=self.cost_usd,
            contextWindow=settings.context_window,
            maxOutputTokens=settings.output_limit_tokens,
        )
        return ResultLine(
            session_id=self.session_id,
            subtype=SUBTYPES.get(status, "error_during_execution"),
            is_error=status != "done",
            result=text,
            status=status,
            duration_ms=round((now - (started if started is not None else now)) * 1000),
            duration_api_ms=round(self.api_seconds * 1000),
            num_turns=self.requests,
            total_cost_usd=self.cost_usd,
            usage=TokenUsage.of(usage),
            cache_hit_ratio=ratio(usage.prompt_cache_hit_tokens, usage.prompt_tokens),
            model=settings.model,
            journal=str(self.journal_path),
            stop_reason="end_turn" if status == "done" else None,
            modelUsage={settings.model: figures},
            errors=[] if status == "done" else [text],
        )

    def close(self) -> None:
        """The conversation ends: its journal is closed and its background jobs are killed."""
        jobs = jobs_of(self.session.registry)
        if jobs is not None:
            jobs.close()
        if self.session.journal is not None:
            self.session.journal.close()
