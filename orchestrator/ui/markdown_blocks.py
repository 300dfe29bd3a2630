"""Markdown for a streamed reply, a block at a time: where the completed blocks end, how many rows the raw text
took (to replace it), and a block rendered without rich's padding."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment, Segments

FENCES = ("```", "~~~")


def completed(buffer: str) -> int:
    """Where the blocks that a blank line outside a code fence has closed end in ``buffer`` (-1: none yet)."""
    cut, fenced, position = -1, False, 0
    for line in buffer.splitlines(keepends=True):
        position += len(line)
        if line.lstrip().startswith(FENCES):
            fenced = not fenced
        elif not fenced and not line.strip() and line.endswith("\n") and position < len(buffer):
            cut = position
    return cut


def rows_taken(text: str, width: int) -> int:
    """How many terminal rows ``text`` took, written from the start of a line on a terminal ``width`` wide."""
    width = max(width, 1)
    lines = text.split("\n")
    return sum(max(1, -(-cell_len(line) // width)) for line in lines[:-1]) + 1 + cell_len(lines[-1]) // width


def markdown_lines(console: Console, block: str) -> Segments:
    """``block`` rendered as markdown, without the blank line rich puts before a leading list and without the
    padding to the console's width."""
    rendered = console.render_lines(Markdown(block, justify="default"), pad=False)
    while rendered and not "".join(segment.text for segment in rendered[0]).strip():
        rendered.pop(0)
    out: list[Segment] = []
    for line in rendered:
        while line and not line[-1].control and not line[-1].text.strip():
            line = line[:-1]
        if line:
            last = line[-1]
            line = [*line[:-1], Segment(last.text.rstrip(), last.style, last.control)]
        out.extend([*line, Segment.line()])
    return Segments(out)
