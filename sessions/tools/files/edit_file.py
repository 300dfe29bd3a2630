"""``edit_file``: exact string replacements in one file, applied in order, all or none.

Each ``old`` must occur exactly once (unless ``replace_all``). When one does not match, nothing is written and the
result names the closest candidates in the file (difflib over windows of as many lines as ``old`` has), so the model
can copy the real text; when it matches several times, the result says how many and where.
"""

from __future__ import annotations

from difflib import SequenceMatcher

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import EditMismatchError, ToolInputError
from sessions.tools.files.textfile import encode_text, read_text, sha256_hex, shown, split_lines, written_path
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.read_memory import FileWrite

MIN_SIMILARITY = 0.5
MAX_CANDIDATES = 3
CANDIDATE_MAX_CHARS = 1_500
MAX_OCCURRENCES_SHOWN = 10


class Edit(ToolArgs):
    old: str = Field(
        min_length=1,
        description="Exact text to replace, copied from the file (without read_file's line-number prefixes).",
    )
    new: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring exactly one.")


class EditFileArgs(ToolArgs):
    path: str = Field(description="File path relative to the workspace root.")
    edits: list[Edit] = Field(min_length=1, description="Applied in order; if any fails, none is applied.")


def closest_candidates(text: str, old: str, limit: int = MAX_CANDIDATES) -> list[tuple[int, int, float, str]]:
    """Up to ``limit`` non-overlapping windows of ``text`` most similar to ``old``: (first line, last line, ratio,
    window text), best first, each at least :data:`MIN_SIMILARITY` similar."""
    lines = split_lines(text)
    span = max(1, len(split_lines(old)))
    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(old)
    scored: list[tuple[float, int]] = []
    for start in range(max(1, len(lines) - span + 1)):
        window = "\n".join(lines[start : start + span])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() < MIN_SIMILARITY or matcher.quick_ratio() < MIN_SIMILARITY:
            continue
        ratio = matcher.ratio()
        if ratio >= MIN_SIMILARITY:
            scored.append((ratio, start))
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[tuple[int, int, float, str]] = []
    for ratio, start in scored:
        if any(start < last and first - 1 < start + span for first, last, _, _ in chosen):
            continue  # overlaps a better window
        window = "\n".join(lines[start : start + span])
        chosen.append((start + 1, min(start + span, len(lines)), ratio, window))
        if len(chosen) == limit:
            break
    return chosen


def _mismatch(text: str, old: str, label: str, rel: str) -> EditMismatchError:
    parts = [f"{label}old text not found in {rel}; no edits were applied, the file is unchanged."]
    candidates = closest_candidates(text, old)
    if candidates:
        parts.append("Closest matches in the file:")
        for first, last, ratio, window in candidates:
            if len(window) > CANDIDATE_MAX_CHARS:
                window = window[:CANDIDATE_MAX_CHARS] + "…"
            parts.append(f"--- lines {first}-{last} (similarity {ratio:.2f})\n{shown(window)}")
    else:
        parts.append("Nothing in the file is similar.")
    parts.append("Copy old exactly from the current file (read_file shows it) and call edit_file again.")
    return EditMismatchError("\n".join(parts))


def _ambiguous(text: str, old: str, count: int, label: str, rel: str) -> EditMismatchError:
    line_numbers: list[str] = []
    position = text.find(old)
    while position != -1 and len(line_numbers) < MAX_OCCURRENCES_SHOWN:
        line_numbers.append(str(text.count("\n", 0, position) + 1))
        position = text.find(old, position + 1)
    more = ", …" if count > MAX_OCCURRENCES_SHOWN else ""
    return EditMismatchError(
        f"{label}old text occurs {count} times in {rel} (lines {', '.join(line_numbers)}{more}); "
        "no edits were applied, the file is unchanged. "
        "Include more surrounding lines to make it unique, or set replace_all."
    )


def apply_edits(text: str, edits: list[Edit], rel: str) -> tuple[str, int]:
    """The edited text and the number of replacements, or an :class:`EditMismatchError` naming the failed edit."""
    replacements = 0
    for number, edit in enumerate(edits, start=1):
        label = f"edit {number}: " if len(edits) > 1 else ""
        old, new = edit.old.replace("\r\n", "\n"), edit.new.replace("\r\n", "\n")
        if old == new:
            raise ToolInputError(f"{label}old and new are identical; nothing would change. No edits were applied.")
        count = text.count(old)
        if count == 0:
            raise _mismatch(text, old, label, rel)
        if count > 1 and not edit.replace_all:
            raise _ambiguous(text, old, count, label, rel)
        text = text.replace(old, new) if edit.replace_all else text.replace(old, new, 1)
        replacements += count if edit.replace_all else 1
    return text, replacements


class EditFileTool(Tool[EditFileArgs]):
    name = "edit_file"
    description = (
        "Replace exact text in one file. Each edit's old must match the file exactly and occur once "
        "(or set replace_all). Edits apply in order, all or none."
    )
    args_model = EditFileArgs
    read_only = False
    parallel_safe = False

    def writes(self, args: EditFileArgs, ctx: ToolContext) -> tuple[str, ...] | None:
        return written_path(ctx, args.path)

    async def run(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            root = GatewayRoot(ctx.root)
            original, rel = read_text(root, args.path)
            crlf = "\r\n" in original
            text = original.replace("\r\n", "\n") if crlf else original
            edited, replacements = apply_edits(text, args.edits, rel)
            data = encode_text(edited.replace("\n", "\r\n") if crlf else edited)
            root.write(args.path, data)
            before, after = len(split_lines(text)), len(split_lines(edited))
            return ToolResult(
                content=f"edited {rel}: {replacements} replacement{'s' if replacements != 1 else ''}, "
                f"{before} → {after} lines",
                wrote=FileWrite(path=rel, before=sha256_hex(encode_text(original)), after=sha256_hex(data)),
            )

        return await trio.to_thread.run_sync(work)
