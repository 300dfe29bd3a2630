"""Running one reply's tool calls for a session and shaping their results (DESIGN §5).

A :class:`ToolBatch` belongs to one :class:`~sessions.session.Session`: it reports the repairs of a prepared batch,
dispatches the calls, turns each result into the text the model sees (an unchanged re-read becomes a note, a long
result is bounded and kept in full beside the journal) and appends the results to the conversation: as tool messages
for real calls, in one user turn for calls scavenged from the text. It reads the session's settings, journal and log
when it runs, so a setting changed between turns (``read_only``) holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sessions import tokens
from sessions.compaction import bound_text
from sessions.events import RepairApplied, ToolFinished, ToolStarted
from sessions.kept_output import keep_output
from sessions.repair.prepare import ImmediateResult, PreparedBatch, RepairedCall, repair_note
from sessions.tail import TailBlock, compose_user_turn
from sessions.tools.base import ToolResult
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.wire import ToolMessage, UserMessage

if TYPE_CHECKING:
    from sessions.session import Session


def preview(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


class ToolBatch:
    """Runs the tool calls of one session's replies; remembers which results the conversation already holds."""

    def __init__(self, session: Session) -> None:
        self.session = session
        # Results already in the conversation, by ToolResult.unchanged_key: (call id, content hash, log epoch). Not
        # rebuilt on resume: a resumed session sends a re-read once in full (DESIGN §5 "Unchanged re-reads").
        self.shown: dict[str, tuple[str, str, int]] = {}

    def report_repairs(self, batch: PreparedBatch) -> None:
        s = self.session
        s.turn_failures += batch.failures
        for ev in batch.events:
            s.emit(
                RepairApplied(session=s.name, repair=str(ev.kind), call_id=ev.call_id, tool=ev.tool, detail=ev.detail)
            )

    async def execute(self, calls: Sequence[RepairedCall]) -> dict[str, ToolResult]:
        s = self.session
        prepared = [PreparedCall(id=c.id, name=c.name, args=c.args) for c in calls]

        def started(call: PreparedCall) -> None:
            args_preview = preview(json.dumps(call.args, ensure_ascii=False, sort_keys=True))
            s.emit(
                ToolStarted(session=s.name, call_id=call.id, name=call.name, args_preview=args_preview, args=call.args)
            )

        results = await dispatch(
            s.registry,
            prepared,
            s.tool_context,
            read_only=s.settings.read_only,
            on_start=started,
        )
        return {c.id: r for c, r in zip(calls, results, strict=True)}

    def unchanged(self, call_id: str, name: str, result: ToolResult) -> ToolResult:
        """A result the conversation already holds, byte for byte and since the last compaction, becomes a note
        naming the earlier call; any other result is remembered and returned as it is."""
        key = result.unchanged_key
        if key is None or result.is_error:
            return result
        epoch = self.session.log.epoch
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
        s = self.session
        result = self.unchanged(call_id, name, result)
        note = repair_note(tuple(repairs))
        content = f"{note}\n{result.content}" if note else result.content
        bounded, was_cut = bound_text(content, s.settings.tool_result_max_chars)
        full = result.full_text or (content if was_cut else None)
        if full is not None and s.journal is not None:  # the journal keeps what the model saw, and a pointer
            kept = keep_output(s.journal.path, call_id, full)
            s.journal.write_event({"kind": "tool_full_text", "call_id": call_id, "path": kept, "chars": len(full)})
        s.emit(
            ToolFinished(
                session=s.name,
                call_id=call_id,
                name=name,
                is_error=result.is_error,
                preview=preview(result.content),
                chars=len(bounded),
                bounded=was_cut,
                text=result.content,
            )
        )
        return bounded

    async def run(self, batch: PreparedBatch) -> bool:
        """Run a reply's calls and append every result in order; True when a result that succeeded ends the turn."""
        s = self.session
        calls = batch.calls
        results = await self.execute(calls) if calls else {}
        closed = False
        names = {c.id: c.function.name for c in s.log[-1].message.tool_calls}  # type: ignore[union-attr]
        for item in batch.items:
            if isinstance(item, ImmediateResult):
                text = self.result_text(
                    item.call_id, names.get(item.call_id, "?"), ToolResult(content=item.content, is_error=item.is_error)
                )
                call_id = item.call_id
            else:
                result = results[item.id]
                if result.data and result.data.get("failure"):
                    s.turn_failures += 1  # an edit mismatch and its kind feed the escalation counter
                text = self.result_text(item.id, item.name, result, item.repairs)
                call_id = item.id
                closed = closed or (result.ends_turn and not result.is_error)
            s._append(ToolMessage(tool_call_id=call_id, content=text))
            s._unsent_tokens += tokens.count(text)
        return closed

    async def run_scavenged(self, batch: PreparedBatch) -> bool:
        """Calls written into reasoning or content: run them, and report their results in a user turn. True when a
        result that succeeded ends the turn."""
        results = await self.execute(batch.scavenged) if batch.scavenged else {}
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
        self.session._append(
            UserMessage(content=compose_user_turn("That ends your turn." if closed else "Continue.", [block]))
        )
        return closed
