"""The session journal: JSONL under ``.reasonix/`` in the workspace (DESIGN §3, issue 4 item 6).

One record per line. The header stores the frozen prefix's exact bytes; every message is stored as the exact bytes
that are sent, so a session rebuilt from its journal re-sends byte-identical requests and its first request after a
resume hits the cache. Lines are flushed as they are written and fsynced at turn boundaries. A torn last line (the
process died mid-write) is tolerated when reading and cut off before appending again.

A corrupt line in the middle (a bad disk block, a hand edit) costs only itself: the lines after it are kept, and
:attr:`JournalState.corrupt_lines` says which were skipped so the caller can tell the user. What the skipped line held
may be missing from the conversation, so :func:`mend` makes it well formed again: every tool call gets its result
right after its assistant message (an interrupted one when it was lost), and a result whose call was lost goes.

A tool call's start is the session's ``tool_started`` event, written (and flushed) before the call runs: on resume a
call with a start and no result was running when the process died (it may have had effects); one without a start
never ran.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import trio
from pydantic import BaseModel, ConfigDict, TypeAdapter

from sessions.wire.messages import AssistantMessage, Message, SystemMessage, ToolMessage

JOURNAL_VERSION = 1
_message_adapter: TypeAdapter[Message] = TypeAdapter(Message)

NOT_RUN_RESULT = "Not run: the session was interrupted before this call ran. Call it again if it is still needed."
"""The result given on resume to a tool call that never started."""
INTERRUPTED_WHILE_RUNNING = (
    "Interrupted: the session stopped while this call was running, and its result was not recorded. It may have had "
    "some or all of its effects: check the state before running it again."
)
"""The result given on resume to a tool call that had started (or whose recorded result was lost)."""


class JournalError(Exception):
    """The journal on disk cannot be used (wrong version, missing header): the file is at fault."""


class JournalHeader(BaseModel):
    model_config = ConfigDict(frozen=True)
    t: Literal["header"] = "header"
    version: int = JOURNAL_VERSION
    session: str
    model: str
    system: str
    """The encoded system message, exactly as sent."""
    tools: str
    """The canonical tool-list bytes, exactly as sent."""


class JournalState(BaseModel):
    """What a journal holds, read back."""

    header: JournalHeader
    messages: list[tuple[Message, bytes]]
    events: list[dict[str, Any]]
    epoch: int = 0
    torn_tail: bool = False
    corrupt_lines: list[int] = []
    """Line numbers (from 1) of unreadable lines in the middle, skipped (since the last rewrite)."""
    kept_after_corrupt: int = 0
    """Readable lines after the first corrupt one: what skipping rather than stopping kept."""
    started: list[tuple[int, str]] = []
    """Each ``tool_started`` event as (messages before it, call id): which calls had begun to run."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def corruption_notice(self, path: Path) -> str | None:
        """What to tell the user about skipped lines; None when there were none."""
        if not self.corrupt_lines:
            return None
        lines = self.corrupt_lines
        which = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        verb = "is" if len(lines) == 1 else "are"
        kept = self.kept_after_corrupt
        return f"{which} of {path} {verb} corrupt and was skipped; {kept} later line{'s' if kept != 1 else ''} kept"

    @property
    def system(self) -> SystemMessage:
        msg = _message_adapter.validate_json(self.header.system)
        assert isinstance(msg, SystemMessage)
        return msg


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    offset = 0
    with path.open("rb") as fh:
        for raw in fh:
            yield offset, raw
            offset += len(raw)


def _record(raw: bytes) -> dict[str, Any] | None:
    """One line as a record; None when it is torn or corrupt."""
    if not raw.endswith(b"\n"):
        return None
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def read_journal(path: Path) -> JournalState:
    header: JournalHeader | None = None
    messages: list[tuple[Message, bytes]] = []
    events: list[dict[str, Any]] = []
    started: list[tuple[int, str]] = []
    epoch = 0
    bad: list[int] = []  # unreadable lines since the last rewrite
    good_after_bad = 0
    last_good = 0
    for number, (_, raw) in enumerate(_lines(path), start=1):
        record = _record(raw)
        try:
            if record is None:
                raise ValueError("unreadable")
            t = record.get("t")
            if t == "header":
                header = JournalHeader.model_validate(record)
                if header.version != JOURNAL_VERSION:
                    raise JournalError(
                        f"{path}: journal version {header.version}, this reasonix reads {JOURNAL_VERSION}"
                    )
            elif t == "msg":
                data = record["raw"].encode("utf-8")
                messages.append((_message_adapter.validate_json(data), data))
            elif t == "rewrite":
                rewritten = [(_message_adapter.validate_json(r), r.encode("utf-8")) for r in record["raw"]]
                epoch += 1
                messages, started, bad, good_after_bad = rewritten, [], [], 0
                last_good = number
                continue
            elif t == "event":
                event = record["event"]
                if isinstance(event, dict) and event.get("kind") == "tool_started":
                    started.append((len(messages), str(event.get("call_id"))))
                events.append(event)
        except (ValueError, KeyError, TypeError, AttributeError):  # a pydantic ValidationError is a ValueError
            bad.append(number)
            continue
        last_good = number
        if bad:
            good_after_bad += 1
    if header is None:
        raise JournalError(f"{path}: no header line; the journal is empty or not a reasonix journal")
    # Unreadable lines at the very end are the torn tail of a write the process never finished, not corruption.
    torn = any(n > last_good for n in bad)
    middle = [n for n in bad if n < last_good]
    return JournalState(
        header=header,
        messages=messages,
        events=events,
        epoch=epoch,
        torn_tail=torn,
        corrupt_lines=middle,
        kept_after_corrupt=good_after_bad,
        started=started,
    )


def _good_length(path: Path) -> int:
    """Length of the file up to the end of its last complete, parseable line (corrupt lines before it stay)."""
    good = 0
    for offset, raw in _lines(path):
        if _record(raw) is not None:
            good = offset + len(raw)
    return good


class Mended(BaseModel):
    """A conversation made well formed for the API (see :func:`mend`)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    messages: list[Message]
    appended_only: bool
    """True when the original messages are untouched and results were only added at the end (no cache cost)."""


def mend(messages: Sequence[Message], started: Sequence[tuple[int, str]]) -> Mended:
    """Every assistant tool call answered by a tool message in the block right after it; no stray tool messages.

    A call without a result is answered with :data:`INTERRUPTED_WHILE_RUNNING` if it had started (a ``tool_started``
    event after its assistant message), else :data:`NOT_RUN_RESULT`. Deterministic: the same journal gives the same
    bytes.
    """
    calls_at: dict[str, list[int]] = {}
    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls:
                calls_at.setdefault(call.id, []).append(i)
    began: set[tuple[int, str]] = set()
    for count, call_id in started:
        positions = calls_at.get(call_id, [])
        k = bisect.bisect_left(positions, count)  # the latest assistant message with this call, before the event
        if k:
            began.add((positions[k - 1], call_id))
    out: list[Message] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if isinstance(m, ToolMessage):
            continue  # its assistant message was lost (or it answers nothing): it cannot be sent
        out.append(m)
        if not (isinstance(m, AssistantMessage) and m.tool_calls):
            continue
        here = i - 1
        open_ids = [c.id for c in m.tool_calls]
        while i < len(messages) and isinstance(messages[i], ToolMessage):
            answer = messages[i]
            i += 1
            assert isinstance(answer, ToolMessage)
            if answer.tool_call_id in open_ids:
                open_ids.remove(answer.tool_call_id)
                out.append(answer)
        for call_id in open_ids:
            text = INTERRUPTED_WHILE_RUNNING if (here, call_id) in began else NOT_RUN_RESULT
            out.append(ToolMessage(tool_call_id=call_id, content=text))
    appended_only = len(out) >= len(messages) and all(a is b for a, b in zip(out, messages, strict=False))
    return Mended(messages=out, appended_only=appended_only)


class Journal:
    """An append-only JSONL writer for one session."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            good = _good_length(path)
            if good != path.stat().st_size:
                with path.open("r+b") as fh:
                    fh.truncate(good)
        self._fh: IO[bytes] = path.open("ab")
        self._dirty = False

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        self._fh.write(line)
        self._fh.flush()
        self._dirty = True

    def write_header(self, header: JournalHeader) -> None:
        self._write(header.model_dump())

    def write_message(self, data: bytes) -> None:
        self._write({"t": "msg", "raw": data.decode("utf-8")})

    def write_rewrite(self, reason: str, encoded: list[bytes]) -> None:
        self._write({"t": "rewrite", "reason": reason, "raw": [d.decode("utf-8") for d in encoded]})

    def write_event(self, event: dict[str, Any]) -> None:
        self._write({"t": "event", "event": event})

    def sync_now(self) -> None:
        if self._dirty:
            os.fsync(self._fh.fileno())
            self._dirty = False

    async def sync(self) -> None:
        """fsync at a turn boundary, off the trio thread."""
        if self._dirty:
            await trio.to_thread.run_sync(self.sync_now)

    def close(self) -> None:
        if not self._fh.closed:
            self.sync_now()
            self._fh.close()
