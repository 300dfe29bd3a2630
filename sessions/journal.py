"""The session journal: JSONL under ``.reasonix/`` in the workspace (DESIGN §3, issue 4 item 6).

One record per line. The header stores the frozen prefix's exact bytes; every message is stored as the exact bytes
that are sent, so a session rebuilt from its journal re-sends byte-identical requests and its first request after a
resume hits the cache. Lines are flushed as they are written and fsynced at turn boundaries. A torn last line (the
process died mid-write) is tolerated when reading and cut off before appending again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

import trio
from pydantic import BaseModel, ConfigDict, TypeAdapter

from sessions.wire import Message, SystemMessage

JOURNAL_VERSION = 1
_message_adapter: TypeAdapter[Message] = TypeAdapter(Message)


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

    model_config = ConfigDict(arbitrary_types_allowed=True)

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


def read_journal(path: Path) -> JournalState:
    header: JournalHeader | None = None
    messages: list[tuple[Message, bytes]] = []
    events: list[dict[str, Any]] = []
    epoch = 0
    torn = False
    for _, raw in _lines(path):
        if not raw.endswith(b"\n"):
            torn = True  # the last write never finished
            break
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            torn = True
            break
        t = record.get("t")
        if t == "header":
            header = JournalHeader.model_validate(record)
            if header.version != JOURNAL_VERSION:
                raise JournalError(f"{path}: journal version {header.version}, this reasonix reads {JOURNAL_VERSION}")
        elif t == "msg":
            data = record["raw"].encode("utf-8")
            messages.append((_message_adapter.validate_json(data), data))
        elif t == "rewrite":
            epoch += 1
            messages = [(_message_adapter.validate_json(r), r.encode("utf-8")) for r in record["raw"]]
        elif t == "event":
            events.append(record["event"])
    if header is None:
        raise JournalError(f"{path}: no header line; the journal is empty or not a reasonix journal")
    return JournalState(header=header, messages=messages, events=events, epoch=epoch, torn_tail=torn)


def _good_length(path: Path) -> int:
    """Length of the file up to the end of its last complete, parseable line."""
    good = 0
    for offset, raw in _lines(path):
        if not raw.endswith(b"\n"):
            break
        try:
            json.loads(raw)
        except json.JSONDecodeError:
            break
        good = offset + len(raw)
    return good


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
