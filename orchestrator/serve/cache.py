"""What the API reads from a run directory, read once: the run's summary (:func:`orchestrator.runs.history.summarize`,
which parses every session journal) and its record (``goal.json``), kept until a file of the run directory changes.

Before each use the directory is listed again (down to :data:`DEPTH` levels, never through a link: its journals,
forks, subagents, plans): a file whose size, modification time or inode changed, or one that came or went, and both
are read again. ``serve-events.jsonl`` is left out, since neither reads it and it grows with every event of a live run
(:class:`~orchestrator.serve.events.EventLog` keeps the run's last summary event itself).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import ReasonixError
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.runs.history import RunSummary, summarize
from orchestrator.serve.events import EVENTS_FILE

DEPTH = 3
"""How deep the run directory is listed: ``forks/agents/PLANNER/x.jsonl`` is the deepest file the summary reads."""

Stamp = tuple[tuple[str, int, int, int], ...]


def stamp(directory: Path, depth: int = DEPTH) -> Stamp:
    """Every entry under ``directory`` (to ``depth`` levels, links not followed) with its size, time and inode."""
    out: list[tuple[str, int, int, int]] = []

    def walk(path: str, level: int) -> None:
        try:
            entries = os.scandir(path)
        except OSError:
            return
        with entries:
            for entry in entries:
                if level == 0 and entry.name == EVENTS_FILE:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
                if level < depth and entry.is_dir(follow_symlinks=False):
                    walk(entry.path, level + 1)

    walk(str(directory), 0)
    return tuple(sorted(out))


@dataclass(frozen=True)
class RunFacts:
    """A run directory as read at ``stamp``: its summary (``None``: not a run, or not this user's) and its record
    (``None``: no readable ``goal.json``)."""

    stamp: Stamp
    summary: RunSummary | None
    record: GoalRecord | None


def _record(workspace: Path, run_id: str) -> GoalRecord | None:
    try:
        return RunStore.open(workspace, run_id).load()
    except ReasonixError:
        return None


class RunCache:
    """The :class:`RunFacts` of each run directory the API was asked about."""

    def __init__(self) -> None:
        self._held: dict[Path, RunFacts] = {}
        self.reads = 0
        """How many times a run directory was read (not served from the cache)."""

    def facts(self, workspace: Path, run_dir: Path) -> RunFacts:
        now = stamp(run_dir)
        held = self._held.get(run_dir)
        if held is not None and held.stamp == now:
            return held
        self.reads += 1
        facts = RunFacts(stamp=now, summary=summarize(run_dir), record=_record(workspace, run_dir.name))
        if now:
            self._held[run_dir] = facts
        else:
            self._held.pop(run_dir, None)  # gone (or never there): nothing to keep
        return facts
