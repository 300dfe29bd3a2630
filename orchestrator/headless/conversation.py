"""One headless conversation: the executor conversation (:func:`orchestrator.launch.open_conversation`, the same
prefix as ``reasonix run``, so the same cached bytes), fed user messages one turn at a time, every session event
turned into stream-json lines (:mod:`orchestrator.headless.translate`) and handed to ``on_event``. ``reasonix -p``,
the Python API (:mod:`orchestrator.api`) and the ACP server (:mod:`orchestrator.acp`) all drive this class.

The conversation's id is its run id (``.reasonix/runs/<id>/executor.jsonl``): ``--resume ID`` continues that journal
(:func:`check_resume`), and :func:`last_conversation` names the workspace's latest one (``--continue``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.conversation.engine import ExecutorConversation, conversation_journal
from orchestrator.conversation.engine import last_conversation as _last
from orchestrator.conversation.limits import MaxBudgetReachedError
from orchestrator.errors import ReasonixError
from orchestrator.goal.store import check_run_id, new_run_id, run_state_dir
from orchestrator.headless.events import (
    ModelUsage,
    ResultLine,
    ResultSubtype,
    StreamJsonEvent,
    SystemInit,
    TokenUsage,
    reasonix_version,
)
from orchestrator.headless.translate import Translator
from orchestrator.hooks.turns import PromptBlocked
from orchestrator.summary import ratio
from sessions import RequestStarted, Session, SessionEvent, UsageReported
from sessions.prompt import TailBlock
from sessions.wire import DeepSeekError, Usage

LAST_FILE = "headless.json"
"""Under ``.reasonix/``: the id of the workspace's latest headless conversation, for ``--continue``."""
POINTER = (LAST_FILE, "session_id")

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
    """What a headless conversation may do beyond the launch: the limit of ``--max-turns``, and how its mode is
    reported."""

    max_turns: int | None = None
    """Requests to the model allowed over the whole conversation (this process)."""
    permission_mode: str = "auto"


def last_conversation(workspace: Path) -> str | None:
    return _last(workspace, *POINTER)


def check_resume(workspace: Path, resume_id: str) -> str:
    """``resume_id`` if it names a journaled conversation of ``workspace``; :class:`NoConversationError` if not."""
    try:
        check_run_id(resume_id)
    except ReasonixError as exc:
        raise NoConversationError(f"--resume {resume_id!r}: {exc}") from None
    if not conversation_journal(workspace, resume_id).is_file():
        raise NoConversationError(
            f"there is no conversation {resume_id!r} in {workspace} (no .reasonix/runs/{resume_id}/"
            "executor.jsonl); take the session_id of an earlier run's result, or drop --resume"
        )
    return resume_id


def fork_conversation(workspace: Path, source_id: str) -> str:
    """``--resume ID --fork-session``: a new conversation that starts where ``source_id`` left off, its id. The
    journal (and the outputs kept beside it) is copied into a run of its own, sealed as every new run is; the
    original is left as it was and can still be resumed."""
    run_state_dir(workspace, source_id)  # this user's run, with no link on the way (raises otherwise)
    source = conversation_journal(workspace, source_id)
    new_id = new_run_id()
    target = run_state_dir(workspace, new_id) / source.name
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as reading, open(target, "xb") as writing:
        shutil.copyfileobj(reading, writing)
    kept = source.parent / f"{source.stem}.outputs"
    if kept.is_dir() and not kept.is_symlink():
        shutil.copytree(kept, target.parent / kept.name, symlinks=True)
    return new_id


class HeadlessConversation:
    """An executor conversation and the stream-json lines it makes. Build it once the conversation is open."""

    def __init__(
        self,
        conversation: ExecutorConversation,
        *,
        on_event: Callable[[StreamJsonEvent], None],
        options: HeadlessOptions | None = None,
    ) -> None:
        self.conversation = conversation
        self.workspace = conversation.workspace
        self.options = options or HeadlessOptions()
        self.on_event = on_event
        self.resumed = conversation.resumed
        self.session_id = conversation.run_id
        self.journal_path = conversation.journal_path
        self._translate = Translator(self.session_id)
        self._api_started: float | None = None
        self._turn_started: float | None = None
        self.turn_running = False
        """A turn was started and has not ended (it is cut off when a cancellation leaves :meth:`send`)."""
        self.api_seconds = 0.0
        self.model: str | None = None
        """The model of the next turns (``set_model``); None: the session's own."""
        conversation.on_event = self._session_event  # type: ignore[assignment]  # stream-json lines
        self._base = (self.session.requests, self.session.usage, conversation.spent_usd)

    @property
    def session(self) -> Session:
        return self.conversation.session

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
        return self.conversation.spent_usd - self._base[2]

    @property
    def subagent_cost_usd(self) -> float:
        """What the ``task`` tool's subagents spent in this process."""
        return self.conversation.subagent_cost_usd

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
        mode = "read-only" if self.session.settings.read_only else self.options.permission_mode
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
                turn = await self.conversation.send(text, tail=tail, model=self.model, max_requests=remaining)
            except MaxBudgetReachedError as exc:
                result = self.result("budget", str(exc), started)
            except DeepSeekError as exc:
                result = self.result("error", str(exc), started)
            else:
                if isinstance(turn, PromptBlocked):
                    result = self.result("error", f"a user_prompt hook blocked the message: {turn.reason}", started)
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
        model = self.model or settings.model
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
            model=model,
            journal=str(self.journal_path),
            stop_reason="end_turn" if status == "done" else None,
            modelUsage={model: figures},
            errors=[] if status == "done" else [text],
        )

    def close(self) -> None:
        """The conversation ends: its journal is closed and its background jobs are killed."""
        self.conversation.close()
