"""The originals a tier took out of the log, kept byte for byte beside the session's journal (DESIGN §3.6 "Tiers").

``<journal stem>.archive/<id>.txt`` holds the text the model saw before a snip, a force or a compaction took it out
(a tool result by its call id, a compaction's folded transcript as ``history-N``); ``recall`` reads it back. An id is
written once: a result snipped first and folded later keeps its first, whole original. A session without a journal
keeps its archive in memory.
"""

from __future__ import annotations

import re
from pathlib import Path

_SAFE = re.compile(r"[^A-Za-z0-9_.:-]")


def safe_id(raw: str) -> str:
    """An archive id made of characters a marker and a file name both take."""
    return _SAFE.sub("_", raw)[:120] or "_"


class Archive:
    """A session's archived originals, by id."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._memory: dict[str, str] = {}

    @classmethod
    def beside(cls, journal_path: Path | None) -> Archive:
        """The archive of the session journaled at ``journal_path`` (in memory without one)."""
        if journal_path is None:
            return cls()
        return cls(journal_path.parent / f"{journal_path.stem}.archive")

    def _path(self, archive_id: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{safe_id(archive_id)}.txt"

    def __contains__(self, archive_id: object) -> bool:
        if not isinstance(archive_id, str):
            return False
        if self.folder is None:
            return archive_id in self._memory
        return self._path(archive_id).is_file()

    def put(self, archive_id: str, text: str) -> bool:
        """Keep ``text`` under ``archive_id`` unless that id is kept already; True when it was written now."""
        if archive_id in self:
            return False
        if self.folder is None:
            self._memory[archive_id] = text
            return True
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(archive_id)
        partial = path.with_suffix(".part")
        partial.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        partial.replace(path)  # whole or absent: a reader never sees half an original
        return True

    def get(self, archive_id: str) -> str | None:
        """The original kept under ``archive_id``, or None."""
        if self.folder is None:
            return self._memory.get(archive_id)
        path = self._path(archive_id)
        if not path.is_file():
            return None
        return path.read_bytes().decode("utf-8", errors="surrogatepass")

    def ids(self) -> list[str]:
        """Every id kept, sorted."""
        if self.folder is None:
            return sorted(self._memory)
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.txt"))
