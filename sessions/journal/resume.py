"""Reading back what a session's journal stored, for :meth:`Session.resume <sessions.session.Session.resume>`
(DESIGN §3.1, §3.2).

A resumed session sends the prefix bytes and message bytes its journal stored, not what is built now; a turn cut off
mid-way may have left tool calls without results, and a corrupt line may have cost a call or a result its pair. The
functions here read and decide; the session applies (it owns its log, journal and events).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from sessions.events import JournalRecovered
from sessions.journal.jsonl import JournalHeader, JournalState, mend
from sessions.log import MessageLog
from sessions.prompt.prefix import Prefix, prefix_hash
from sessions.wire.messages import Message

CORRUPT_REWRITE_REASON = "the journal had corrupt lines: tool calls and results that lost their pair were mended"


def header_for(name: str, model: str, prefix: Prefix) -> JournalHeader:
    """A new journal's header: the frozen prefix's exact bytes."""
    return JournalHeader(
        session=name,
        model=model,
        system=prefix.system_bytes.decode("utf-8"),
        tools=prefix.tools_bytes.decode("utf-8"),
    )


def stored_prefix(state: JournalState, built: Prefix) -> Prefix:
    """``built`` (whose tool list drives dispatch) carrying the bytes the journal stored, which are what is sent."""
    system_bytes = state.header.system.encode("utf-8")
    tools_bytes = state.header.tools.encode("utf-8")
    return dataclasses.replace(
        built,
        system=state.system,
        system_bytes=system_bytes,
        tools_bytes=tools_bytes,
        system_hash=prefix_hash(system_bytes),
        tools_hash=prefix_hash(tools_bytes),
    )


def stored_log(state: JournalState) -> MessageLog:
    """The journal's messages with their stored bytes (never re-encoded), at the journal's rewrite epoch."""
    log = MessageLog()
    for message, data in state.messages:
        log.append(message, data=data)
    log.epoch = state.epoch
    return log


@dataclass(frozen=True, slots=True)
class Mending:
    """How to make a resumed conversation well formed: messages to append (no cache cost), or a whole new log."""

    append: tuple[Message, ...] = ()
    rewrite: tuple[Message, ...] | None = None
    notice: str | None = None
    """What to tell the user about corrupt lines skipped; None when there were none."""

    def recovered(self, session: str, state: JournalState) -> JournalRecovered:
        """The event that tells the user about the corrupt lines skipped."""
        return JournalRecovered(
            session=session,
            message=self.notice or "",
            corrupt_lines=state.corrupt_lines,
            mended=self.rewrite is not None,
        )


def mending(log: MessageLog, state: JournalState, path: Path) -> Mending:
    """Answer the calls a cut-off turn left open; after a corrupt line, make the conversation well formed."""
    mended = mend(log.messages, state.started)
    notice = state.corruption_notice(path)
    if mended.appended_only:
        return Mending(append=tuple(mended.messages[len(log) :]), notice=notice)
    return Mending(rewrite=tuple(mended.messages), notice=notice)
