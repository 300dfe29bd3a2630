"""The turns of a conversation, for ``/rewind`` and ``/fork``: ``turns.jsonl`` beside the session's journal, one line
per turn: what the user typed, where the journal stood before it (its size in bytes), the mode the model had last
heard of, and where the turn's checkpoints are (none when it wrote nothing).

The journal is append-only, so its first ``offset`` bytes are exactly the conversation before that turn: cutting it
there (a rewind) or copying that much (a fork) gives a session that re-sends the same bytes, so its next request hits
the cache on everything up to that point.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.checkpoints.turns import TurnRef
from orchestrator.goal.store import TURNS_FILE

JOURNAL_NAME = "executor.jsonl"
"""The executor conversation's journal, in its run directory (:func:`orchestrator.conversation.engine.
conversation_journal`)."""


class TurnRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")
    number: int
    text: str
    """What the user typed (a slash command's message too), as typed."""
    offset: int
    """The journal's size before the turn."""
    sent_mode: str | None = None
    """The mode the model had last heard of before the turn (None: none yet), so a rewind knows whether the next
    message must carry the mode block again."""
    run_id: str | None = None
    step_id: str | None = None
    seq: int | None = None
    """Where the turn's checkpoints are (a fork's early turns keep their parent's run); None: it wrote nothing."""
    files: tuple[str, ...] = ()
    """What the turn changed (``M path``), at most a few."""

    @property
    def ref(self) -> TurnRef | None:
        return TurnRef(self.run_id, self.step_id, self.seq) if self.run_id and self.step_id and self.seq else None


class TurnLog:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / TURNS_FILE

    def read(self) -> list[TurnRecord]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out: list[TurnRecord] = []
        for line in lines:
            try:
                out.append(TurnRecord.model_validate_json(line))
            except ValidationError:
                continue  # a torn last line
        return out

    def append(self, record: TurnRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(record.model_dump_json() + "\n")

    def write(self, records: list[TurnRecord]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        os.replace(tmp, self.path)


def cut_journal(journal: Path, offset: int) -> None:
    """Keep the first ``offset`` bytes of ``journal`` (the conversation before a turn)."""
    with journal.open("r+b") as fh:
        fh.truncate(offset)
        fh.flush()
        os.fsync(fh.fileno())


def copy_journal(source: Path, target: Path, offset: int) -> None:
    """``target`` holds the first ``offset`` bytes of ``source``: a fork's journal."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src:
        data = src.read(offset)
    with target.open("wb") as dst:
        dst.write(data)
        dst.flush()
        os.fsync(dst.fileno())


class ConversationEntry(BaseModel):
    model_config = ConfigDict(frozen=True)
    run_id: str
    turns: int
    first: str
    last: str
    modified: float


def conversations(runs_root: Path) -> list[ConversationEntry]:
    """The conversations of a workspace (run directories with a journal and no goal), the latest first."""
    if not runs_root.is_dir():
        return []
    out: list[ConversationEntry] = []
    for folder in runs_root.iterdir():
        journal = folder / JOURNAL_NAME
        if not journal.is_file() or (folder / "goal.json").exists():
            continue
        records = TurnLog(folder).read()
        if not records:
            continue  # a `reasonix run` task, or a conversation without a turn
        out.append(
            ConversationEntry(
                run_id=folder.name,
                turns=len(records),
                first=records[0].text,
                last=records[-1].text,
                modified=journal.stat().st_mtime,
            )
        )
    return sorted(out, key=lambda c: (c.modified, c.run_id), reverse=True)
