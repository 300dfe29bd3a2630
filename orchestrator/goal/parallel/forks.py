"""A fork of the executor for one step of a parallel wave (issue 14 item 2, DESIGN §5 "Parallel branches").

The fork's journal starts as a copy of the executor's at fork time (its header and messages, and its cache
diagnostics; not its usage, which stays the executor's), so the fork's first request is the executor's last request's
bytes plus one user message: a cache hit on the prefix the executor already stored. It has the executor's system
prompt, tools and model, its own mailbox, its own escalation state (the escalator knows its turns as
``executor@<step>``), and its tools work in the branch's copy of the workspace. Every event it reports carries the
step id. The executor's own journal is never written by a fork.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from orchestrator.goal.context import GoalContext, Lane
from orchestrator.goal.store import FORKS_DIR, usage_events
from orchestrator.goal.tools import Mailbox, executor_tools
from sessions import SessionEvent
from sessions.tools import default_registry
from sessions.wire import Reply, ReplyRequest, ReplySource, StreamEvent, Usage

_KEPT_EVENTS = frozenset({"cache"})
"""Events of the executor's journal a fork keeps: its cache diagnostics go on from the executor's (so a first request
that missed the executor's prefix is reported as an unexplained miss)."""


@dataclasses.dataclass(frozen=True, slots=True)
class KeyedSource:
    """A reply source that presents the fork's requests to ``inner`` (the goal's escalator) under ``key``, so each
    branch's turns have their own escalation state."""

    inner: ReplySource
    key: str

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
        return await self.inner(dataclasses.replace(call, session=self.key), emit)


def fork_journal(source: Path, target: Path) -> None:
    """``target`` made anew as the conversation of ``source``: header, messages, rewrites and cache diagnostics."""
    kept: list[bytes] = []
    for line in source.read_bytes().splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break  # a torn last line
        if line.startswith(b'{"t":"event"'):
            try:
                kind = json.loads(line).get("event", {}).get("kind")
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                continue
            if kind not in _KEPT_EVENTS:
                continue
        kept.append(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"".join(kept))


def _new_journal(folder: Path, step_id: str) -> Path:
    """``<step>.jsonl``, or ``<step>.<n>.jsonl`` for the step's n-th branch: a fork's journal is never overwritten, so
    what an earlier branch of the step cost (a rerun, or a process killed mid-wave) stays counted."""
    path, n = folder / f"{step_id}.jsonl", 1
    while path.exists():
        n += 1
        path = folder / f"{step_id}.{n}.jsonl"
    return path


def fork_totals(run_dir: Path) -> tuple[int, Usage, float]:
    """Requests, usage and dollars of every fork this run ever had (all processes), from the forks' journals: their
    own usage events (a fork's journal starts with the executor's messages, never its usage)."""
    events = [e for j in sorted((run_dir / FORKS_DIR).glob("*.jsonl")) for e in usage_events(j)]
    usage = sum((Usage.model_validate(e.get("usage") or {}) for e in events), Usage())
    return len(events), usage, sum(float(e.get("cost_usd", 0.0)) for e in events)


def open_fork(ctx: GoalContext, step_id: str, root: Path, env: Mapping[str, str]) -> Lane:
    """A fork of the executor (as it stands now) for ``step_id``, its tools working in ``root``, its commands (and the
    step's verify commands) with ``env`` added to their environment."""
    executor = ctx.executor
    assert executor is not None and executor.journal is not None, "open_sessions() first"
    journal = _new_journal(ctx.store.dir / FORKS_DIR, step_id)
    fork_journal(executor.journal.path, journal)
    mailbox = Mailbox(objective=ctx.record.objective)
    key = f"{executor.name}@{step_id}"
    system_prompt, registry = ctx.extended(
        default_registry(use_ripgrep=ctx.options.use_ripgrep), journal, root, parent=step_id
    )  # its subagents are agent:NAME#N@STEP: their own escalation state and journals
    for tool in executor_tools(mailbox):  # after the extensions, as the executor's: no subagent gets report_step
        registry.register(tool)

    def on_event(event: SessionEvent) -> None:
        ctx.emit(event.model_copy(update={"step_id": step_id}))

    session = ctx.open_session(
        name=executor.name,
        system_prompt=system_prompt,
        registry=registry,
        settings=executor.settings,
        journal_path=journal,
        on_event=on_event,
        reply_source=KeyedSource(ctx.replies, key),
        resume=True,
        root=root,
        env=env,
        request_gate=ctx.budget,  # the goal's one ledger: a fork's requests count and are capped with every other
    )
    session.task_state = ctx.task_state
    return Lane(session, mailbox, root, key, step_id, dict(env))
