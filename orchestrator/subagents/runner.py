"""Running one subagent: an isolated sub-session built from its profile, its journal beside the parent's, its report
kept so that a resumed parent never runs a finished subagent again.

Subagents run at once up to ``max_parallel``. A writing one works in a branch workspace, a copy of the parent's
workspace made as a goal's parallel step gets one (:class:`~orchestrator.branches.BranchWorkspace`), and when it gives
its report its changes are merged back the same way, three ways and all or nothing, one merge at a time; a conflict
leaves the parent's workspace as it was and the parent reads which files and why. Without a run directory (nothing
journaled) or where no copy can be made, a writing subagent works in the parent's workspace, one at a time.
Every subagent's requests are asked of one :class:`SharedRequests` gate: a bound on all of them together, which also
asks the parent's own gate when there is one (a goal's budget, or whatever gate the front end installed on the parent
session: ``-p --max-budget-usd``), so subagents spend from the parent's budget.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from orchestrator.branches.outcome import BranchError
from orchestrator.branches.workspace import BranchWorkspace
from orchestrator.config.endpoints import resolve_model, session_limits
from orchestrator.errors import ReasonixError
from orchestrator.events import SubagentFinished
from orchestrator.policy.escalation import Escalator
from orchestrator.subagents.profiles import Profile
from plans import write_atomic
from sessions import Session, SessionEvent, SessionSettings, StreamUpdate
from sessions.tools import ToolRegistry, ToolResult
from sessions.wire import DeepSeekError, ReplySource, RequestEstimate, RequestGate

if TYPE_CHECKING:
    from orchestrator.config.model import Config

PREAMBLE = (
    "You are a subagent: another agent gave you one task. Work on it with your tools, then answer with a report "
    "that stands on its own (what you found or did, with paths and line numbers); the report is all it reads.\n\n"
)
"""Put in front of every profile's text: the same bytes for every subagent, so it is part of the shared prefix."""
CONTINUE = "You were stopped before you finished. Go on where you left off, then give your report. Your task:\n\n"
"""A resumed subagent's next message, followed by its task (its journal may have been cut before the task's own)."""
LOST = (
    "The copy of the workspace you worked in was lost while you were stopped: this is a fresh copy, without the "
    "changes you made before. Check the files and make those changes again.\n\n"
)
"""In front of the task of a resumed writing subagent whose copy could not be reopened."""
SESSION_PREFIX = "agent:"
"""A subagent session's name is ``agent:PROFILE#N`` (the Nth of its parent; ``agent:PROFILE#N@planner`` for a goal
planner's), in its events and the summary."""
MERGE_EVERYTHING = ("*",)
"""A writing subagent may change any file of the workspace (a glob whose ``*`` matches across ``/``)."""
DEFAULT_TOTAL_REQUESTS = 200
DEFAULT_MAX_PARALLEL = 3


class SubagentBudgetError(ReasonixError):
    """The subagents of one session used every request they were allowed together; the parent reads why."""


@dataclass
class SharedRequests:
    """One bound on the requests of every subagent of a session, asking ``parent`` (the parent's gate) too."""

    limit: int = DEFAULT_TOTAL_REQUESTS
    parent: RequestGate | None = None
    used: int = 0
    follow: Callable[[], RequestGate | None] | None = None
    """Without ``parent``: the parent session's gate as it is when a request is asked (a front end installs its
    budget on the session after building it)."""

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        if self.used >= self.limit:
            raise SubagentBudgetError(
                f"the subagents of this session used all {self.limit} requests they may send together; "
                "finish the work yourself or start a new session"
            )
        parent = self.parent if self.parent is not None else (self.follow() if self.follow is not None else None)
        release = parent.admit(estimate) if parent is not None else (lambda: None)
        self.used += 1
        return release


def _stored(done: Path | None) -> ToolResult | None:
    """The report of a subagent that finished earlier (a resumed parent asks again), or None."""
    if done is None or not done.exists():
        return None
    stored = json.loads(done.read_text(encoding="utf-8"))
    return ToolResult(content=stored["content"], is_error=stored["is_error"], data=stored["data"])


def _store(done: Path, result: ToolResult) -> None:
    payload = {"content": result.content, "is_error": result.is_error, "data": result.data}
    write_atomic(done, json.dumps(payload, ensure_ascii=False) + "\n")


def _only_cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation (alone, or a group of nothing else)."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(trio.Cancelled)[1] is None
    return isinstance(exc, trio.Cancelled)


def _resumable(journal: Path | None) -> bool:
    """Whether ``journal`` holds a subagent that was stopped before it finished (creating its folder if not)."""
    if journal is None:
        return False
    journal.parent.mkdir(parents=True, exist_ok=True)
    return journal.exists() and journal.stat().st_size > 0


def run_key(profile: Profile, task: str) -> str:
    """The subagent's journal name: its profile and a digest of its task (the same task resumes the same journal)."""
    return f"{profile.name}-{hashlib.sha256(task.encode()).hexdigest()[:12]}"


@dataclass
class SubagentRunner:
    """Builds and runs the subagents of one parent session."""

    builder: Callable[..., Session]
    """Builds a session (:class:`orchestrator.build.SessionBuilder`, the parent's)."""
    config: Config
    tools: ToolRegistry
    """The tools a profile may pick from (never the ``task`` tool: subagents do not start subagents)."""
    journal_dir: Path | None = None
    """Where the subagents' journals go (``agents/`` beside the parent's journal); ``None``: not journaled."""
    workspace: Path | None = None
    """The parent's workspace, which a writing subagent's copy is made of and merged back into (``None``: it
    works in place)."""
    root: Path | None = None
    """Where the subagents' tools work when not in a copy (``None``: the builder's workspace)."""
    max_parallel: int = DEFAULT_MAX_PARALLEL
    gate: SharedRequests = field(default_factory=SharedRequests)
    on_event: Callable[[Any], None] | None = None
    """Hears the subagents' session events (not their streamed text) and a :class:`SubagentFinished` for each."""
    parent: str = ""
    """The parent's name when it is not the main session (``planner``), after each subagent's name."""
    sessions: list[Session] = field(default_factory=list)
    """Every subagent session run so far, for the parent's summary."""
    asked: Counter[str] = field(default_factory=Counter)
    """How often each profile and task was asked for: the Nth time has its own journal (``KEY.N``), so asking again
    runs again, while a resumed parent, counting from the start, gets the kept reports of what it asked before."""
    replies: ReplySource | None = None
    """The parent's reply source (a goal's escalator, or the outage waits around it): a subagent on the flash model
    sends through it, so a turn whose reply starts with the marker goes to pro as the parent's do."""
    escalator: Escalator | None = None
    """The escalator behind ``replies``: each subagent's turn begins there, and its count is the subagent's figure."""
    _slots: trio.Semaphore | None = None
    _writer: trio.Lock | None = None
    _merging: trio.Lock = field(default_factory=trio.Lock)

    def _forward(self, event: SessionEvent) -> None:
        # The parent's renderer hears what its subagents do, but not their streamed text (several may run at once).
        if self.on_event is not None and not isinstance(event, StreamUpdate):
            self.on_event(event)

    def _finished(
        self, session: Session, profile: Profile, result: ToolResult, reason: str, merged: tuple[str, ...] = ()
    ) -> None:
        if self.on_event is None:
            return
        usage = session.usage
        self.on_event(
            SubagentFinished(
                session=session.name,
                profile=profile.name,
                ok=not result.is_error,
                reason=reason,
                read_only=profile.read_only,
                requests=session.requests,
                cost_usd=round(session.cost_usd, 6),
                escalations=self.escalator.escalated[session.name] if self.escalator is not None else 0,
                cache_hit_tokens=usage.prompt_cache_hit_tokens,
                cache_miss_tokens=usage.prompt_cache_miss_tokens,
                merged=merged,
            )
        )

    def _name(self, profile: Profile) -> str:
        """``agent:PROFILE#N`` (the Nth subagent of its parent), ``…@PARENT`` when the parent is not the main one."""
        return f"{SESSION_PREFIX}{profile.name}#{len(self.sessions) + 1}" + (f"@{self.parent}" if self.parent else "")

    def registry_for(self, profile: Profile) -> ToolRegistry:
        picked = [t for t in self.tools if not profile.tools or t.name in profile.tools]
        return ToolRegistry([t for t in picked if t.read_only or not profile.read_only])

    def settings_for(self, profile: Profile) -> SessionSettings:
        model = resolve_model(self.config, profile.model)  # flash, pro, a [[providers]] entry's name, or an id
        effort: Any = profile.effort if profile.effort in ("high", "max") else self.config.reasoning_effort
        return SessionSettings(
            model=model,
            thinking=self.config.thinking,
            reasoning_effort=effort,
            read_only=profile.read_only,
            max_requests_per_turn=profile.max_requests,
            max_text_calls=self.config.repair.max_text_calls,
            **session_limits(self.config, model),
        )

    def _paths(self, profile: Profile, task: str) -> tuple[Path | None, Path | None]:
        if self.journal_dir is None:
            return None, None
        key = run_key(profile, task)
        self.asked[key] += 1
        key += f".{self.asked[key]}" if self.asked[key] > 1 else ""
        return self.journal_dir / f"{key}.jsonl", self.journal_dir / f"{key}.result.json"

    async def run(self, profile: Profile, task: str) -> ToolResult:
        journal, done = self._paths(profile, task)
        stored = _stored(done)
        if stored is not None:
            return stored
        if self._slots is None:
            self._slots, self._writer = trio.Semaphore(self.max_parallel), trio.Lock()
        async with self._slots:
            if profile.read_only or self._branches(journal) is not None:
                result = await self._run(profile, task, journal)
            else:
                assert self._writer is not None
                async with self._writer:
                    result = await self._run(profile, task, journal)
        if done is not None:
            _store(done, result)
        return result

    def _branches(self, journal: Path | None) -> Path | None:
        """The run directory a writing subagent's copy goes under, or None when it works in place."""
        if self.workspace is None or journal is None or self.journal_dir is None:
            return None
        return self.journal_dir.parent

    async def _open_branch(
        self, profile: Profile, journal: Path | None, resumed: bool
    ) -> tuple[BranchWorkspace | None, bool]:
        """A writing subagent's copy of the workspace (None: it works in place), and whether the copy a resumed one
        had worked in is lost (it then starts from a fresh copy and is told so)."""
        run_dir = None if profile.read_only else self._branches(journal)
        if run_dir is None or journal is None or self.workspace is None:
            return None, False
        name = f"agent-{journal.stem}"
        if resumed:  # an interrupted subagent goes on in the copy it had written to
            kept = await BranchWorkspace.reopen(self.workspace, run_dir, name)
            if kept is not None:
                return kept, False
        try:
            return await BranchWorkspace.open(self.workspace, run_dir, name), resumed
        except BranchError:
            return None, False  # no copy here (no git): it works in the parent's workspace instead

    async def _run(self, profile: Profile, task: str, journal: Path | None) -> ToolResult:
        resumed = _resumable(journal)
        branch, lost = await self._open_branch(profile, journal, resumed)
        if branch is None and not profile.read_only and self._branches(journal) is not None:
            assert self._writer is not None
            async with self._writer:  # no copy could be made: in place, one at a time
                return await self._in(profile, task, journal, resumed, None)
        try:
            result = await self._in(profile, task, journal, resumed, branch, lost)
        except BaseException as exc:
            if not _only_cancelled(exc):  # a cancelled one's copy stays: a resumed parent's subagent goes on in it
                await self._discard(branch)
            raise
        await self._discard(branch)
        return result

    @staticmethod
    async def _discard(branch: BranchWorkspace | None) -> None:
        if branch is not None:
            with trio.CancelScope(shield=True):
                await branch.discard()

    async def _in(
        self,
        profile: Profile,
        task: str,
        journal: Path | None,
        resumed: bool,
        branch: BranchWorkspace | None,
        lost: bool = False,
    ) -> ToolResult:
        """Run the subagent in ``branch`` (None: the parent's workspace), merge what it changed back, report."""
        name, settings = self._name(profile), self.settings_for(profile)
        escalates = self.escalator is not None and settings.model == self.escalator.flash_model
        if escalates and self.escalator is not None:
            self.escalator.begin_turn(name)  # its one turn starts on flash, escalated as the parent's turns are
        session = self.builder(
            name=name,  # never sent: only events and journals
            system_prompt=PREAMBLE + profile.system,
            registry=self.registry_for(profile),
            settings=settings,
            reply_source=self.replies if escalates else None,
            journal_path=journal,
            on_event=self._forward,
            resume=resumed,
            request_gate=self.gate,
            root=branch.path if branch is not None else self.root,
            env=branch.env() if branch is not None else None,
        )
        self.sessions.append(session)
        result, reason = await self._turn(session, profile, (LOST if lost else "") + task, resumed)
        merged: tuple[str, ...] = ()
        if branch is not None:
            result, reason, merged = await self._merge(branch, profile, result, reason)
        self._finished(session, profile, result, reason, merged)
        return result

    async def _merge(
        self, branch: BranchWorkspace, profile: Profile, result: ToolResult, reason: str
    ) -> tuple[ToolResult, str, tuple[str, ...]]:
        """A finished writing subagent's changes merged into the parent's workspace (all or nothing), and what the
        parent reads of it; a subagent that stopped before its report merges nothing."""
        data = dict(result.data or {})
        if result.is_error:
            note = "\nIts changes were not merged into your workspace (it did not finish)."
            return ToolResult.error(result.content + note, data=data), reason, ()
        try:
            async with self._merging:
                outcome = await branch.merge_back(MERGE_EVERYTHING)
        except BranchError as exc:
            why = f"its changes could not be merged back: {exc}"
            text = f"The subagent {profile.name} finished, but {why}\n{result.content}"
            return ToolResult.error(text, data=data), why, ()
        if outcome.merged:
            data["merged"] = list(outcome.changed)
            said = ", ".join(outcome.changed) if outcome.changed else "it changed no file"
            note = f"\nIts changes are merged into your workspace: {said}."
            return ToolResult(content=result.content + note, data=data), "", outcome.changed
        why = f"its changes were not merged back and {outcome.reason}"
        files = ", ".join(outcome.conflicts)
        text = (
            f"The subagent {profile.name} finished, but {why} Redo its changes to {files} yourself (its report says "
            f"what they were), or ask again with a task that leaves those files alone.\n{result.content}"
        )
        return ToolResult.error(text, data=data | {"conflicts": list(outcome.conflicts)}), why, ()

    async def _turn(self, session: Session, profile: Profile, task: str, resumed: bool) -> tuple[ToolResult, str]:
        """The subagent's one turn: its report, or an error result saying why it stopped (and that why alone)."""
        data: dict[str, Any] = {"agent": profile.name}
        try:
            turn = await session.send(CONTINUE + task if resumed else task, max_requests=profile.max_requests)
        except (DeepSeekError, ReasonixError) as exc:
            why = str(exc)
            return ToolResult.error(f"The subagent {profile.name} stopped before it finished: {why}", data=data), why
        finally:
            data |= {"requests": session.requests, "cost_usd": round(session.cost_usd, 6)}
            data["cache_hit_tokens"] = session.usage.prompt_cache_hit_tokens
        if turn.status == "done":
            return ToolResult(content=f'<report agent="{profile.name}">\n{turn.text}\n</report>', data=data), ""
        why = {
            "request_limit": f"it used all {profile.max_requests} requests it is allowed (max_requests in its "
            f"profile, {profile.source})",
        }.get(turn.status, f"its turn ended with status {turn.status}")
        said = f"\nWhat it had said last:\n{turn.text}" if turn.text else ""
        result = ToolResult.error(
            f"The subagent {profile.name} stopped before it finished: {why}. Do the rest yourself or give it a "
            f"smaller task.{said}",
            data=data,
        )
        return result, why
