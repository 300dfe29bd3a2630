"""Where the lines of ``reasonix -p`` go, per ``--output-format``, and how user messages come in per
``--input-format``.

* ``text``: the final answer of each turn, nothing else on standard output;
* ``json``: one ``result`` object at the end;
* ``stream-json``: every line of :mod:`orchestrator.headless.events`, one JSON object a line, flushed as it happens.

A closed standard output (``reasonix -p … | head -1``) is noticed at the write: :class:`Output` stops writing, calls
``on_closed`` (the command cancels the run, so the session unwinds as after Ctrl-C), and the command exits 141 quietly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.errors import UsageError
from orchestrator.headless.events import ResultLine, StreamEventLine, StreamJsonEvent, dump
from orchestrator.text import json_nesting

OutputFormat = Literal["text", "json", "stream-json"]


class Output:
    """A callable sink for stream-json events that writes what ``fmt`` shows."""

    def __init__(
        self,
        stream: TextIO,
        fmt: OutputFormat,
        on_closed: Callable[[], None] = lambda: None,
        *,
        partial: bool = True,
        edit: Callable[[StreamJsonEvent], StreamJsonEvent] = lambda event: event,
    ) -> None:
        self.stream = stream
        self.fmt = fmt
        self.on_closed = on_closed
        self.partial = partial
        """``stream_event`` lines are written (``--include-partial-messages``)."""
        self.edit = edit
        """What the command adds to a line before it is written (the ``init`` line's ignored flags, a result's
        permission denials)."""
        self.closed = False
        self.last_result: ResultLine | None = None

    def __call__(self, event: StreamJsonEvent) -> None:
        event = self.edit(event)
        if isinstance(event, StreamEventLine) and not self.partial:
            return
        if isinstance(event, ResultLine):
            self.last_result = event
            if self.fmt == "text":
                self._write(event.result.rstrip("\n") + "\n" if event.result and not event.is_error else "")
        if self.fmt == "stream-json":
            self._write(json.dumps(dump(event), ensure_ascii=False) + "\n")

    def raw(self, obj: dict[str, Any]) -> None:
        """A control-protocol line (``control_request`` / ``control_response``), in ``stream-json`` only."""
        if self.fmt == "stream-json":
            self._write(json.dumps(obj, ensure_ascii=False) + "\n")

    def finish(self) -> None:
        """``json``: the last result, once."""
        if self.fmt == "json" and self.last_result is not None:
            self._write(json.dumps(dump(self.last_result), ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        if self.closed or not text:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except BrokenPipeError:
            self.closed = True
            self.on_closed()


class _Content(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str = ""


class _InputMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["user"] = "user"
    content: str | list[_Content]


class StreamInputLine(BaseModel):
    """One line of ``--input-format stream-json``: ``{"type": "user", "message": {"role": "user", "content": ...}}``,
    the content a string or a list of ``{"type": "text", "text": ...}`` blocks (Claude Code's shape)."""

    model_config = ConfigDict(extra="allow")
    type: Literal["user"]
    message: _InputMessage

    def text(self) -> str:
        content = self.message.content
        if isinstance(content, str):
            return content
        return "\n".join(block.text for block in content if block.type == "text")


def parse_input_line(raw: str, number: int) -> str | None:
    """The user's text of one stream-json input line; ``None`` for a blank line. :class:`UsageError` otherwise."""
    if not raw.strip():
        return None
    try:
        data: Any = json_nesting.loads(raw)  # nested past the bound: a ValueError, before json recursed to its end
        return StreamInputLine.model_validate(data).text()
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise UsageError(
            f"line {number} of standard input is not a stream-json user message ({first}); send "
            '{"type": "user", "message": {"role": "user", "content": "..."}} one per line'
        ) from None
