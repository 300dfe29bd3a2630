"""The full text of a tool result that was cut for the model, kept once beside the session journal, bounded.

The journal holds what the model saw (the bounded result, as a message). When a tool cut its output, or the session's
result cap did, the whole text is written to ``<journal stem>.outputs/NNNN-<call id>.txt`` next to the journal, at
most :data:`KEPT_MAX_CHARS` characters (head and tail of anything longer), and the journal records only where it is.
Nothing of it is sent to the model.
"""

from __future__ import annotations

import re
from pathlib import Path

KEPT_MAX_CHARS = 2_000_000


def _bounded(text: str) -> str:
    if len(text) <= KEPT_MAX_CHARS:
        return text
    half = KEPT_MAX_CHARS // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters not kept …]\n{text[-half:]}"


def outputs_folder(journal_path: Path) -> Path:
    """Where a journal's kept outputs go (``read_file`` reads them as ``~outputs/NAME``)."""
    return journal_path.parent / f"{journal_path.stem}.outputs"


def keep_output(journal_path: Path, call_id: str, text: str) -> str:
    """Write ``text`` beside the journal; return its path relative to the journal's directory."""
    folder = outputs_folder(journal_path)
    folder.mkdir(parents=True, exist_ok=True)
    index = sum(1 for _ in folder.iterdir())
    name = f"{index:04}-{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id)[:80]}.txt"
    (folder / name).write_text(_bounded(text), encoding="utf-8", errors="surrogateescape")
    return f"{folder.name}/{name}"
