"""A reference patch (``git diff`` form) read into files and hunks, and each hunk turned into the ``edit_file`` edit
an executor would make: the hunk's old text (context and removed lines) and its new text, widened with more of the
file's lines until the old text occurs exactly once, as ``edit_file`` requires."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.bench.task import BenchError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchFormatError(BenchError):
    """A reference patch that is not a unified diff in ``git diff`` form, or whose hunks do not match the seed."""


@dataclass
class Hunk:
    old_start: int
    old: list[str] = field(default_factory=list)
    """Lines (with their newlines) of the file before: context and removed."""
    new: list[str] = field(default_factory=list)
    """Lines after: context and added."""


@dataclass
class FilePatch:
    path: str
    """The path after the change (before, for a deleted file), relative to the workspace root."""
    created: bool = False
    deleted: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def new_text(self) -> str:
        """The whole content of a created file."""
        return "".join(line for h in self.hunks for line in h.new)


def _path(line: str) -> str | None:
    raw = line[4:].split("\t")[0].strip()
    if raw == "/dev/null":
        return None
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


def parse_patch(text: str) -> list[FilePatch]:
    """The files of a unified diff, in order. Raises :class:`PatchFormatError`."""
    files: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    left = [0, 0]  # old and new lines the current hunk still holds (its header's counts)
    last: list[str] | None = None  # the side the previous line went to, for "\\ No newline at end of file"
    old_path: str | None = None
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        inside = hunk is not None and (left[0] > 0 or left[1] > 0)
        if inside and line[:1] in (" ", "-", "+", "\n", "\r"):
            assert hunk is not None
            kind = line[:1] if line[:1] in (" ", "-", "+") else " "
            body = line[1:] if line[:1] in (" ", "-", "+") else line
            if kind in (" ", "-"):
                hunk.old.append(body)
                left[0] -= 1
            if kind in (" ", "+"):
                hunk.new.append(body)
                left[1] -= 1
            last = hunk.old if kind == "-" else hunk.new if kind == "+" else None
        elif line.startswith("\\"):
            if hunk is None:
                raise PatchFormatError(f"line {number}: {line.strip()!r} outside a hunk")
            for side in [last] if last is not None else [hunk.old, hunk.new]:
                if side:
                    side[-1] = side[-1].rstrip("\r\n")
        elif inside:
            raise PatchFormatError(f"line {number}: the hunk ends early (its header counts more lines)")
        elif line.startswith("diff --git "):
            current, hunk, old_path = None, None, None
        elif line.startswith("--- "):
            old_path, hunk = _path(line), None
        elif line.startswith("+++ "):
            new_path = _path(line)
            path = new_path or old_path
            if path is None:
                raise PatchFormatError(f"line {number}: both sides are /dev/null")
            current = FilePatch(path=path, created=old_path is None, deleted=new_path is None)
            files.append(current)
            hunk = None
        elif line.startswith("@@"):
            match = _HUNK.match(line)
            if match is None or current is None:
                raise PatchFormatError(f"line {number}: a hunk header outside a file, or malformed: {line.strip()!r}")
            hunk = Hunk(old_start=int(match[1]))
            left = [int(match[2] or 1), int(match[4] or 1)]
            current.hunks.append(hunk)
    if hunk is not None and (left[0] > 0 or left[1] > 0):
        raise PatchFormatError("the last hunk ends early (its header counts more lines than the patch holds)")
    if not files:
        raise PatchFormatError("no file in the patch: expected `diff --git`, `---`, `+++` and `@@` lines")
    return files


def widen(text: str, hunk: Hunk, at_line: int) -> tuple[str, str]:
    """The ``(old, new)`` edit for ``hunk`` on ``text`` (the file as it is now), widened with the file's own lines
    around it until ``old`` occurs exactly once. ``at_line`` is where the hunk is expected (1-based)."""
    old, new = "".join(hunk.old), "".join(hunk.new)
    if old and text.count(old) == 1:
        return old, new
    file_lines = text.splitlines(keepends=True)
    start = _locate(file_lines, hunk.old, at_line)
    end = start + len(hunk.old)
    before, after = start, end
    while before > 0 or after < len(file_lines):
        if before > 0:
            before -= 1
        if after < len(file_lines):
            after += 1
        prefix, suffix = "".join(file_lines[before:start]), "".join(file_lines[end:after])
        wide = prefix + old + suffix
        if text.count(wide) == 1:
            return wide, prefix + new + suffix
    return text, text.replace(old, new, 1) if old else new + text


def _locate(file_lines: list[str], old: list[str], at_line: int) -> int:
    """The index where ``old`` starts in the file, nearest to ``at_line``."""
    n = len(old)
    starts = [i for i in range(len(file_lines) - n + 1) if file_lines[i : i + n] == old]
    if not starts:
        raise PatchFormatError(f"a hunk expected near line {at_line} does not match the file")
    return min(starts, key=lambda i: abs(i + 1 - at_line))


def apply_hunks(text: str, hunks: list[Hunk]) -> list[tuple[str, str]]:
    """The edits that turn ``text`` into the patched file, one per hunk, each unique in the file as it is when
    it is applied (the hunks in order, as ``edit_file`` applies them one call after another)."""
    edits = []
    delta = 0
    for hunk in hunks:
        old, new = widen(text, hunk, hunk.old_start + delta)
        edits.append((old, new))
        text = text.replace(old, new, 1)
        delta += len(hunk.new) - len(hunk.old)
    return edits
