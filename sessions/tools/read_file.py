"""``read_file``: a text file, or a range of its lines, with line numbers; bounded, saying how to read on."""

from __future__ import annotations

import trio
from pydantic import Field, model_validator

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolLimits, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.paths import resolve
from sessions.tools.textfile import read_text, shown, split_lines


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File path relative to the workspace root.")
    start_line: int | None = Field(None, ge=1, description="First line to read (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line to read, inclusive.")

    @model_validator(mode="after")
    def _ordered(self) -> ReadFileArgs:
        if self.start_line is not None and self.end_line is not None and self.end_line < self.start_line:
            raise ValueError("end_line must not be smaller than start_line")
        return self


def render(text: str, rel: str, start: int | None, end: int | None, limits: ToolLimits) -> str:
    """Numbered lines ``N<TAB>text``, cut at ``limits.read_max_lines`` lines or ``read_max_chars`` characters."""
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return f"({rel} is empty)"
    first = start or 1
    if first > total:
        raise ToolInputError(f"start_line={first} is past the end of {rel!r}, which has {total} lines")
    last = min(end or total, total)
    out: list[str] = []
    size = 0
    for number in range(first, last + 1):
        line = lines[number - 1]
        if len(line) > limits.line_max_chars:
            line = line[: limits.line_max_chars] + f"… [line cut at {limits.line_max_chars} characters]"
        entry = f"{number}\t{shown(line)}"
        if out and (len(out) >= limits.read_max_lines or size + len(entry) + 1 > limits.read_max_chars):
            shown_to = number - 1
            out.append(
                f"… truncated at line {shown_to} of {total}; call read_file with start_line={shown_to + 1} to read more"
            )
            return "\n".join(out)
        out.append(entry)
        size += len(entry) + 1
    if first > 1 or last < total:
        out.append(f"(lines {first}-{last} of {total})")
    return "\n".join(out)


class ReadFileTool(Tool[ReadFileArgs]):
    name = "read_file"
    description = (
        "Read a text file. Each line is prefixed with its number and a tab (not part of the file). "
        "At most 400 lines per call; use start_line/end_line for other parts."
    )
    args_model = ReadFileArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> str:
            target = resolve(ctx.root, args.path)
            return render(read_text(target), target.rel, args.start_line, args.end_line, ctx.limits)

        return ToolResult(content=await trio.to_thread.run_sync(work, abandon_on_cancel=True))
