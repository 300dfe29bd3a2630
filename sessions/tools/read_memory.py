"""What the conversation already shows of each file, so a re-read sends only what is new (DESIGN §5 "Re-reads").

``read_file`` hands the session a :class:`FileView` (the file's SHA-256, its lines as read_file renders them, the
lines this result shows); ``edit_file`` and ``write_file`` hand it a :class:`FileWrite` (the hash of the bytes they
found and of the bytes they wrote). :class:`ReadMemory` keeps, per file, the text the model last saw and which call
showed each line, for the log's current epoch, and turns a read's full result into a shorter one:

* the file is byte for byte what the model last read, and the range overlaps lines already shown: only the lines not
  shown yet, with a note naming the calls that showed the rest;
* the file changed since, but only through this session's own writes (every write found exactly the bytes the one
  before it left, starting from the bytes last read): the changed lines with :data:`CONTEXT_LINES` lines of context,
  each hunk saying which lines it replaced, and a note naming the earlier read and the write;
* anything else (a change by anyone else, a compaction since, ``full=true``, a file too large to track): the text as
  read, which becomes the new memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from pydantic import BaseModel, ConfigDict

CONTEXT_LINES = 2
"""Lines of context around each change in a re-read after the session's own edit."""
MAX_CALLS_NAMED = 3


class FileView(BaseModel):
    """A ``read_file`` result's file: what the session needs to remember it and to shorten a later re-read."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    lines: tuple[str, ...]
    """Every line of the file as read_file shows it (after the ``N<TAB>`` prefix)."""
    first: int
    last: int
    """The lines this result shows, inclusive (``last < first``: none)."""
    trailer: str | None = None
    """The result's closing line (the range and the line count, or how to read on), if it has one."""
    full: bool = False
    """The model asked for the whole range (``full=true``): never shortened."""


class FileWrite(BaseModel):
    """An ``edit_file`` or ``write_file`` result's file: the bytes it found (None: no file, or not hashed) and left."""

    model_config = ConfigDict(frozen=True)

    path: str
    before: str | None
    after: str


@dataclass(slots=True)
class _Known:
    sha256: str
    lines: tuple[str, ...]
    shown: dict[int, str]
    """Line number (in ``lines``) → the call whose result showed it."""
    epoch: int
    expected: str | None = None
    """The hash this session's own writes since the read left, while every write found what the previous left."""
    writers: list[str] = field(default_factory=list)


def spans(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted numbers as inclusive runs: ``[1, 2, 3, 7]`` → ``[(1, 3), (7, 7)]``."""
    out: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def _ranges(numbers: Iterable[int]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans(numbers))


def _calls(ids: Iterable[str]) -> str:
    unique = list(dict.fromkeys(ids))
    named = ", ".join(unique[:MAX_CALLS_NAMED]) + (" …" if len(unique) > MAX_CALLS_NAMED else "")
    return f"call{'s' if len(unique) > 1 else ''} {named}"


def _still(ids: list[str]) -> str:
    return "those results are still above" if len(set(ids)) > 1 else "that result is still above"


class ReadMemory:
    """Per file: the text the conversation shows and where. Owned by one session's tool batch; not rebuilt on
    resume (the first re-read of each file after a resume is sent in full)."""

    def __init__(self) -> None:
        self.known: dict[str, _Known] = {}

    def wrote(self, call_id: str, write: FileWrite) -> None:
        """A write of this session: still "only our own edits" while it found the bytes expected."""
        known = self.known.get(write.path)
        if known is None:
            return
        if write.before is None or write.before != (known.expected or known.sha256):
            del self.known[write.path]  # someone else changed it first: the next read is sent in full
            return
        known.expected = write.after
        known.writers.append(call_id)

    def present(self, call_id: str, view: FileView, content: str, epoch: int) -> str:
        """The text to send for a read whose full result is ``content``; remembers what it shows."""
        known = self.known.get(view.path)
        window = range(view.first, view.last + 1)
        usable = (
            known is not None
            and known.epoch == epoch
            and not view.full
            and len(window) > 0
            and view.sha256 in (known.sha256, known.expected)
        )
        if known is None or not usable:
            self.known[view.path] = _Known(view.sha256, view.lines, {n: call_id for n in window}, epoch)
            return content
        edited = view.sha256 != known.sha256
        mapping, changed = _mapping(known.lines, view.lines) if edited else ({}, set[int]())
        carried: dict[int, str] = {}
        for new in range(1, len(view.lines) + 1):
            old = mapping.get(new) if edited else new
            if old is not None and old in known.shown:
                carried[new] = known.shown[old]
        send = {n for n in window if n not in carried}
        if edited:
            send |= {n for c in changed for n in range(c - CONTEXT_LINES, c + CONTEXT_LINES + 1) if n in window}
            send |= {n for n in window if n not in mapping}
        self.known[view.path] = _Known(view.sha256, view.lines, {**carried, **{n: call_id for n in send}}, epoch)
        earlier = [carried[n] for n in window if n in carried]
        if not earlier:
            return content  # nothing of this range is above: the text as read
        if edited:
            note = (
                f"{view.path} changed since the read_file {_calls(known.shown.values())} only through this "
                f"session's own writes ({_calls(known.writers)}). Only the changed lines follow, with "
                f"{CONTEXT_LINES} lines of context, numbered as the file is now; every other line of lines "
                f"{view.first}-{view.last} is as {_calls(earlier)} showed it (moved by the lines added or removed "
                "above it). full=true returns the whole range."
            )
        elif send:
            note = (
                f"Lines {_ranges(n for n in window if n in carried)} of {view.path} are as the read_file "
                f"{_calls(earlier)} returned them (the file is unchanged since, and {_still(earlier)}). "
                f"Only the lines not shown yet follow; full=true returns the whole range."
            )
        else:
            note = (
                f"Unchanged: lines {view.first}-{view.last} of {view.path} are as the read_file {_calls(earlier)} "
                f"returned them, and {_still(earlier)} in this conversation. Use it from there."
            )
        body = _hunks(view, send, mapping if edited else None)
        return "\n".join([note, *body, *([view.trailer] if view.trailer and send else [])])


def _mapping(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[dict[int, int], set[int]]:
    """New line number → old line number for lines that stayed; and the new line numbers where something changed
    (an inserted or replaced line, or the line after a deletion)."""
    mapping: dict[int, int] = {}
    changed: set[int] = set()
    for tag, i1, _i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            mapping.update({j1 + k + 1: i1 + k + 1 for k in range(j2 - j1)})
        else:
            changed.update(range(j1 + 1, j2 + 1) if j2 > j1 else (j1, j1 + 1))
    return mapping, changed


def _hunks(view: FileView, send: set[int], mapping: dict[int, int] | None) -> list[str]:
    out: list[str] = []
    for a, b in spans(send):
        if mapping is not None:
            olds = [mapping[n] for n in range(a, b + 1) if n in mapping]
            was = f"were {min(olds)}-{max(olds)}" if olds else "new"
            out.append(f"@@ lines {a}-{b} ({was}) @@")
        elif out:
            out.append("…")
        out.extend(f"{n}\t{view.lines[n - 1]}" for n in range(a, b + 1))
    return out
