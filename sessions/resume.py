"""Building a session's journal at its start, and rebuilding a session from its journal (DESIGN §3.1, §3.2).

:meth:`Session.start <sessions.session.Session.start>` and :meth:`Session.resume <sessions.session.Session.resume>`
are the public face; the work is here. A resumed session sends the prefix bytes and message bytes its journal stored,
reports the whole session's totals, and answers the tool calls a cut-off turn left open.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sessions.events import DiagnosticsReported, JournalRecovered, UsageReported
from sessions.journal import Journal, JournalHeader, JournalState, mend, read_journal
from sessions.log import MessageLog
from sessions.prefix import Prefix, prefix_hash

if TYPE_CHECKING:
    from sessions.session import Session

S = TypeVar("S", bound="Session")


def start(cls: type[S], *, journal_path: Path | None, **kwargs: Any) -> S:
    """A new session of class ``cls``; with a journal path, a new journal whose header holds the prefix bytes."""
    journal = Journal(journal_path) if journal_path is not None else None
    session = cls(journal=journal, **kwargs)
    if journal is not None:
        journal.write_header(
            JournalHeader(
                session=session.name,
                model=session.settings.model,
                system=session.prefix.system_bytes.decode("utf-8"),
                tools=session.prefix.tools_bytes.decode("utf-8"),
            )
        )
        journal.sync_now()
    return session


def resume(cls: type[S], *, journal_path: Path, prefix: Prefix, **kwargs: Any) -> S:
    """A session of class ``cls`` rebuilt from its journal (see :meth:`Session.resume
    <sessions.session.Session.resume>`)."""
    state = read_journal(journal_path)
    system_bytes = state.header.system.encode("utf-8")
    tools_bytes = state.header.tools.encode("utf-8")
    stored = dataclasses.replace(
        prefix,
        system=state.system,
        system_bytes=system_bytes,
        tools_bytes=tools_bytes,
        system_hash=prefix_hash(system_bytes),
        tools_hash=prefix_hash(tools_bytes),
    )
    log = MessageLog()
    for message, data in state.messages:
        log.append(message, data=data)
    log.epoch = state.epoch
    journal = Journal(journal_path)
    session = cls(journal=journal, log=log, prefix=stored, **kwargs)
    restore_totals(session, state.events)
    mend_open_calls(session, state, journal_path)
    return session


def restore_totals(session: Session, events: Sequence[dict[str, Any]]) -> None:
    """Requests, usage and cost from the journal's events, so the figures a resumed session reports (the footer's
    session cost, the summary) cover the whole session, not only this process. A request is one ``usage`` event
    (every request has exactly one, aborted or not); the cache diagnostics go on from theirs."""
    for event in events:
        kind = event.get("kind")
        if kind == "usage":
            used = UsageReported.model_validate(event)
            session.requests += 1
            session.usage = session.usage + used.usage
            session.cost_usd += used.cost_usd
        elif kind == "cache":
            session.tracker.restore(DiagnosticsReported.model_validate(event).diagnostics)


def mend_open_calls(session: Session, state: JournalState, path: Path) -> None:
    """Answer the calls a cut-off turn left open; after a corrupt line, make the conversation well formed."""
    mended = mend(session.log.messages, state.started)
    if mended.appended_only:
        for message in mended.messages[len(session.log) :]:
            session._append(message)
    else:
        reason = "the journal had corrupt lines: tool calls and results that lost their pair were mended"
        session.log.rewrite(mended.messages, reason)
        if session.journal is not None:
            session.journal.write_rewrite(reason, list(session.log.encoded))
    notice = state.corruption_notice(path)
    if notice is not None:
        session.emit(
            JournalRecovered(
                session=session.name,
                message=notice,
                corrupt_lines=state.corrupt_lines,
                mended=not mended.appended_only,
            )
        )
    if session.journal is not None:
        session.journal.sync_now()
