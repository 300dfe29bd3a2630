"""Running one reply's tool calls for a session and shaping their results (DESIGN §5).

A :class:`ToolBatch` belongs to one session and is handed what it works with, not the session: the tools, the log
it reads the rewrite epoch from, the journal, and the session's ``emit`` and ``append``. It dispatches a prepared
batch's calls, turns each result into the text the model sees (an unchanged re-read becomes a note, a long result is
bounded and kept in full beside the journal) and appends the results to the conversation: as tool messages for real
calls, in one user turn for calls scavenged from the text. Whether the session is read-only is asked per batch, so a
mode changed between turns holds; the failures a batch saw are returned, for the session's turn counter.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from sessions.compaction import bound_text
from sessions.events import RepairApplied, SessionEvent, ToolFinished, ToolStarted
from sessions.journal.jsonl import Journal
from sessions.journal.kept_output import keep_output
from sessions.log import MessageLog
from sessions.prompt.tail import TailBlock, compose_user_turn
from sessions.repair.prepare import ImmediateResult, PreparedBatch, RepairedCall, repair_note
from sessions.tools.base import ToolContext, ToolResult
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.tools.read_memory import ReadMemory
from sessions.tools.registry import ToolRegistry
from sessions.tools.shell.job_tools import jobs_of
from sessions.wire.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

Append = Callable[[Message, str | None], None]
"""The session's append: a message into the log and the journal, and the text to count toward the context."""


def preview(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


JOBS_TAG = "jobs"
"""The tail block that announces background jobs that ended (:mod:`sessions.tools.shell.jobs`)."""
SHOWN_CHARS = 2000
"""A text argument in a tool-started event's ``args_shown``: cut at a line end within this many characters."""
SHOWN_ITEMS = 20
"""A list argument in ``args_shown``: its first items only."""
TAIL_LINES = 15
TAIL_LINE_CHARS = 240


def bounded_args(value: Any) -> Any:
    """``value`` (a call's JSON arguments) with each text cut to :data:`SHOWN_CHARS` (at a line end where there is
    one, then a line ``…``) and each list to :data:`SHOWN_ITEMS` items; numbers, booleans and null as they are."""
    if isinstance(value, str):
        if len(value) <= SHOWN_CHARS:
            return value
        cut = value.rfind("\n", 0, SHOWN_CHARS)
        return value[: cut if cut > 0 else SHOWN_CHARS] + "\n…"
    if isinstance(value, dict):
        return {str(k): bounded_args(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded_args(v) for v in value[:SHOWN_ITEMS]]
    return value


def tail_lines(text: str) -> tuple[str, int]:
    """The last :data:`TAIL_LINES` lines of ``text`` (each cut to :data:`TAIL_LINE_CHARS`), and how many it has."""
    rows = text.rstrip("\n").splitlines()
    kept = [row if len(row) <= TAIL_LINE_CHARS else row[: TAIL_LINE_CHARS - 1] + "…" for row in rows[-TAIL_LINES:]]
    return "\n".join(kept), len(rows)


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    closed: bool
    """A result that succeeded ends the turn (a protocol tool handed something to the supervisor)."""
    failures: int = 0
    """Failures the results reported (an edit mismatch), for the turn's escalation counter."""


class ToolBatch:
    """Runs the tool calls of one session's replies; remembers which results the conversation already holds."""

    def __init__(
        self,
        *,
        session: str,
        registry: ToolRegistry,
        tool_context: ToolContext,
        log: MessageLog,
        journal: Journal | None,
        emit: Callable[[SessionEvent], None],
        append: Append,
        max_chars: int,
    ) -> None:
        self.session = session
        self.registry = registry
        self.tool_context = tool_context
        self.log = log
        self.journal = journal
        self.emit = emit
        self.append = append
        self.max_chars = max_chars
        # Results already in the conversation, by ToolResult.unchanged_key: (call id, content hash, log epoch). Not
        # rebuilt on resume: a resumed session sends a re-read once in full (DESIGN §5 "Unchanged re-reads").
        self.shown: dict[str, tuple[str, str, int]] = {}
        self.reads = ReadMemory()  # what each file's lines the conversation holds (DESIGN §5 "Re-reads")
        self.jobs = jobs_of(registry)

    def job_notes(self) -> list[TailBlock]:
        """The ``<jobs>`` block announcing background jobs that ended unannounced ([] when none did)."""
        notes = self.jobs.notes() if self.jobs is not None else []
        return [TailBlock(tag=JOBS_TAG, body="\n".join(notes))] if notes else []

    async def handle(self, batch: PreparedBatch, reply: AssistantMessage, *, read_only: bool) -> BatchOutcome | None:
        """Report the batch's repairs, then run the reply's tool calls or the calls scavenged from its text; None
        when it made none. The outcome's failures include the repairs'."""
        for ev in batch.events:
            self.emit(
                RepairApplied(
                    session=self.session, repair=str(ev.kind), call_id=ev.call_id, tool=ev.tool, detail=ev.detail
                )
            )
        if reply.tool_calls:
            outcome = await self.run(batch, reply.tool_calls, read_only=read_only)
        elif batch.scavenged or batch.scavenged_results:
            outcome = await self.run_scavenged(batch, read_only=read_only)
        else:
            return BatchOutcome(closed=False, failures=batch.failures) if batch.failures else None
        return BatchOutcome(closed=outcome.closed, failures=outcome.failures + batch.failures)

    async def execute(self, calls: Sequence[RepairedCall], *, read_only: bool) -> dict[str, ToolResult]:
        prepared = [PreparedCall(id=c.id, name=c.name, args=c.args) for c in calls]

        def started(call: PreparedCall) -> None:
            args_preview = preview(json.dumps(call.args, ensure_ascii=False, sort_keys=True))
            self.emit(
                ToolStarted(
                    session=self.session,
                    call_id=call.id,
                    name=call.name,
                    args_preview=args_preview,
                    args_shown=bounded_args(call.args),
                    args=call.args,
                )
            )

        results = await dispatch(self.registry, prepared, self.tool_context, read_only=read_only, on_start=started)
        return {c.id: r for c, r in zip(calls, results, strict=True)}

    def unchanged(self, call_id: str, name: str, result: ToolResult) -> ToolResult:
        """A result the conversation already holds, byte for byte and since the last compaction, becomes a note
        naming the earlier call; any other result is remembered and returned as it is."""
        key = result.unchanged_key
        if key is None or result.is_error:
            return result
        epoch = self.log.epoch
        digest = hashlib.sha256(result.content.encode("utf-8", errors="surrogatepass")).hexdigest()
        earlier = self.shown.get(key)
        if earlier is not None and earlier[1] == digest and earlier[2] == epoch:
            return ToolResult(
                content=f"Unchanged: {key} is exactly what the {name} call {earlier[0]} returned, and that result is "
                "still above in this conversation. Use it from there."
            )
        self.shown[key] = (call_id, digest, epoch)
        return result

    def result_text(self, call_id: str, name: str, result: ToolResult, repairs: Sequence[Any] = ()) -> str:
        result = self.unchanged(call_id, name, result)
        text = result.content
        if result.view is not None and not result.is_error:  # a re-read: only what the conversation lacks
            text = self.reads.present(call_id, result.view, text, self.log.epoch)
        if result.wrote is not None and not result.is_error:
            self.reads.wrote(call_id, result.wrote)
        note = repair_note(tuple(repairs))
        content = f"{note}\n{text}" if note else text
        kept = None
        if result.full_text is not None and result.data and result.data.get("folded"):  # folded test output
            kept = self.keep(call_id, result.full_text)
            if kept is not None:
                content += f'\n[the whole output: read_file path="~outputs/{PurePosixPath(kept).name}"]'
        bounded, was_cut = bound_text(content, self.max_chars)
        full = result.full_text or (content if was_cut else None)
        if full is not None and kept is None:  # the journal keeps what the model saw, and a pointer
            self.keep(call_id, full)
        tail, lines = tail_lines(result.full_text or result.content)
        self.emit(
            ToolFinished(
                session=self.session,
                call_id=call_id,
                name=name,
                is_error=result.is_error,
                preview=preview(result.content),
                chars=len(bounded),
                bounded=was_cut,
                tail=tail,
                lines=lines,
                text=result.content,
            )
        )
        return bounded

    def keep(self, call_id: str, full: str) -> str | None:
        """Keep ``full`` beside the journal (None without one); the path relative to the journal's directory."""
        if self.journal is None:
            return None
        kept = keep_output(self.journal.path, call_id, full)
        self.journal.write_event({"kind": "tool_full_text", "call_id": call_id, "path": kept, "chars": len(full)})
        return kept

    async def run(self, batch: PreparedBatch, tool_calls: Sequence[ToolCall], *, read_only: bool) -> BatchOutcome:
        """Run a reply's calls (``tool_calls``: the reply's own, as the model wrote them) and append every result in
        order."""
        calls = batch.calls
        results = await self.execute(calls, read_only=read_only) if calls else {}
        closed = False
        failures = 0
        names = {c.id: c.function.name for c in tool_calls}
        for item in batch.items:
            if isinstance(item, ImmediateResult):
                text = self.result_text(
                    item.call_id, names.get(item.call_id, "?"), ToolResult(content=item.content, is_error=item.is_error)
                )
                call_id = item.call_id
            else:
                result = results[item.id]
                if result.data and result.data.get("failure"):
                    failures += 1  # an edit mismatch and its kind feed the escalation counter
                text = self.result_text(item.id, item.name, result, item.repairs)
                call_id = item.id
                closed = closed or (result.ends_turn and not result.is_error)
            text = compose_user_turn(text, self.job_notes())  # a job that ended rides in front of the next result
            self.append(ToolMessage(tool_call_id=call_id, content=text), text)
        return BatchOutcome(closed=closed, failures=failures)

    async def run_scavenged(self, batch: PreparedBatch, *, read_only: bool) -> BatchOutcome:
        """Calls written into reasoning or content: run them, and report their results in a user turn."""
        results = await self.execute(batch.scavenged, read_only=read_only) if batch.scavenged else {}
        parts = []
        closed = False
        for call in batch.scavenged:
            result = results[call.id]
            closed = closed or (result.ends_turn and not result.is_error)
            text = self.result_text(call.id, call.name, result, call.repairs)
            parts.append(f'<result call="{call.name}" id="{call.id}">\n{text}\n</result>')
        for item in batch.scavenged_results:
            parts.append(f'<result id="{item.call_id}">\n{item.content}\n</result>')
        block = TailBlock(
            tag="tool-results",
            body="You wrote tool calls in your text instead of calling the tools. They were run; "
            "next time use the tool-calling interface.\n" + "\n".join(parts),
        )
        self.append(
            UserMessage(content=compose_user_turn("That ends your turn." if closed else "Continue.", [block])), None
        )
        return BatchOutcome(closed=closed)
