"""The emulator's script: for each session, the replies the scripted "model" gives, in order, and their faults.

A script is JSON (or TOML) validated by these pydantic models; ``scenarios/README.md`` documents it with an annotated
example. A session is found by a marker substring of the request's first system message (``system_contains``), by
that message's fingerprint (``fingerprint``, see :func:`fingerprint`), or, with neither, it catches every request
no other session claims. ``user_contains`` narrows a session to requests whose last user message holds a marker:
a session with it that matches is preferred over one without, so forks of one session (same system message, one
per parallel step) each get their own replies whatever order their requests arrive in.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scenarios.emulator.errors import ScriptInvalid

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "insufficient_system_resource"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ------------------------------------------------------------------------------------------------------- faults


class HttpStatusFault(_Spec):
    """Answer the request with an HTTP error instead of the reply, ``times`` times (the reply waits)."""

    kind: Literal["http_status"] = "http_status"
    status: Literal[429, 500, 503] = 429
    times: int = Field(default=1, ge=1)
    retry_after: float | None = Field(default=None, ge=0)
    """Seconds for the ``Retry-After`` header; 429 sends 1 when not given."""


class DropFault(_Spec):
    """Close the connection after ``after_chunks`` stream chunks (0: right after the headers), ``times`` times."""

    kind: Literal["drop"] = "drop"
    after_chunks: int = Field(default=0, ge=0)
    times: int = Field(default=1, ge=1)


class StallFault(_Spec):
    """Stop for ``seconds`` after ``after_chunks`` chunks. ``then: drop`` (default) closes the connection afterwards
    and keeps the reply for the retry; ``then: continue`` finishes the reply (a slow but good answer)."""

    kind: Literal["stall"] = "stall"
    seconds: float = Field(gt=0)
    after_chunks: int = Field(default=0, ge=0)
    then: Literal["drop", "continue"] = "drop"
    times: int = Field(default=1, ge=1)


class KeepAliveFault(_Spec):
    """Send ``count`` ``: keep-alive`` comment lines before the first chunk, ``interval`` seconds apart."""

    kind: Literal["keep_alive"] = "keep_alive"
    count: int = Field(default=3, ge=1)
    interval: float = Field(default=0.0, ge=0)


class TruncateArgumentsFault(_Spec):
    """Cut the last tool call's arguments to ``keep_chars`` characters (default: half); ``finish_reason: length``."""

    kind: Literal["truncate_arguments"] = "truncate_arguments"
    keep_chars: int | None = Field(default=None, ge=0)


class ToolCallInReasoningFault(_Spec):
    """Write the tool calls as markup at the end of ``reasoning_content`` and send none in ``tool_calls``."""

    kind: Literal["tool_call_in_reasoning"] = "tool_call_in_reasoning"


class ToolCallInContentFault(_Spec):
    """Leak the tool calls as markup into ``content`` and send none in ``tool_calls``."""

    kind: Literal["tool_call_in_content"] = "tool_call_in_content"


Fault = Annotated[
    HttpStatusFault
    | DropFault
    | StallFault
    | KeepAliveFault
    | TruncateArgumentsFault
    | ToolCallInReasoningFault
    | ToolCallInContentFault,
    Field(discriminator="kind"),
]
FailingFault = HttpStatusFault | DropFault | StallFault
"""Faults that make an attempt fail (the reply is kept for the next attempt)."""


# ------------------------------------------------------------------------------------------------------ replies


class ToolCallSpec(_Spec):
    name: str
    arguments: str | dict[str, Any] = "{}"
    """A raw string sent as is, or an object the emulator serializes the way the model writes JSON."""
    id: str | None = None
    """The call id; by default a stable one derived from the session, reply and call index."""

    def raw_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class StreamShape(_Spec):
    """How a streamed reply is cut into SSE chunks (default: word-sized deltas, each event written at once).

    ``reasoning_pieces`` / ``content_pieces`` fix the deltas exactly (joined, they must give the reply's text; a reply
    may give the pieces alone). ``delta_chars`` cuts every text without explicit pieces into deltas of that many
    characters. A delta is a JSON string, so it always holds whole characters; ``write_bytes`` splits at the byte
    level instead: every SSE event is written to the socket in pieces of that many bytes, so a multi-byte UTF-8
    character (and a ``data:`` line) can straddle two network reads, as on a slow link.
    """

    reasoning_pieces: tuple[str, ...] | None = None
    content_pieces: tuple[str, ...] | None = None
    delta_chars: int | None = Field(default=None, ge=1)
    write_bytes: int | None = Field(default=None, ge=1)


class ReplySpec(_Spec):
    reasoning: str = ""
    content: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish_reason: FinishReason | None = None
    """Default: ``tool_calls`` when there are tool calls, else ``stop``."""
    faults: tuple[Fault, ...] = ()
    stream: StreamShape | None = None
    """The chunk boundaries of the streamed reply (see :class:`StreamShape`)."""

    @model_validator(mode="before")
    @classmethod
    def _text_from_pieces(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("stream"), dict):
            for text, pieces in (("reasoning", "reasoning_pieces"), ("content", "content_pieces")):
                given = data["stream"].get(pieces)
                if given is not None and text not in data and all(isinstance(p, str) for p in given):
                    data = {**data, text: "".join(given)}
        return data

    @model_validator(mode="after")
    def _pieces_join(self) -> ReplySpec:
        if self.stream is not None:
            for text, pieces, name in (
                (self.reasoning, self.stream.reasoning_pieces, "reasoning"),
                (self.content, self.stream.content_pieces, "content"),
            ):
                if pieces is not None and "".join(pieces) != text:
                    raise ValueError(f"stream.{name}_pieces joined must equal {name} ({''.join(pieces)!r} != {text!r})")
        return self

    @property
    def effective_finish_reason(self) -> FinishReason:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


class SessionSpec(_Spec):
    key: str = Field(min_length=1)
    system_contains: str | None = None
    fingerprint: str | None = None
    user_contains: str | None = None
    """A marker the request's last user message must hold (as well as any system matcher)."""
    replies: tuple[ReplySpec, ...] = ()

    def matches(self, system_text: str | None, last_user_text: str | None = None) -> bool:
        if self.user_contains is not None and (last_user_text is None or self.user_contains not in last_user_text):
            return False
        if self.system_contains is not None:
            return system_text is not None and self.system_contains in system_text
        if self.fingerprint is not None:
            return system_text is not None and fingerprint(system_text).startswith(self.fingerprint)
        return True

    @property
    def catch_all(self) -> bool:
        return self.system_contains is None and self.fingerprint is None and self.user_contains is None


class Script(_Spec):
    version: Literal[1] = 1
    sessions: tuple[SessionSpec, ...] = ()
    reject_keys: tuple[str, ...] = ()
    """API keys answered with 401 ``Authentication Fails`` on every endpoint, as DeepSeek answers a bad key (any
    other non-empty key is accepted)."""

    @model_validator(mode="after")
    def _unique_keys(self) -> Script:
        keys = [s.key for s in self.sessions]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"session keys must be unique; repeated: {', '.join(dupes)}")
        if sum(1 for s in self.sessions if s.catch_all) > 1:
            raise ValueError(
                "at most one session may have none of system_contains, fingerprint and user_contains (the catch-all)"
            )
        return self

    def session_for(self, system_text: str | None, last_user_text: str | None = None) -> SessionSpec | None:
        """The first session with ``user_contains`` that matches, else the first other session with a matcher that
        matches, else the catch-all, else ``None``."""
        for s in self.sessions:
            if s.user_contains is not None and s.matches(system_text, last_user_text):
                return s
        for s in self.sessions:
            if not s.catch_all and s.user_contains is None and s.matches(system_text):
                return s
        return next((s for s in self.sessions if s.catch_all), None)

    @classmethod
    def parse(cls, data: Any, *, source: str = "script") -> Script:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ScriptInvalid(f"{source} is not a valid emulator script: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a ``.json`` or ``.toml`` script."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptInvalid(f"cannot read the script {p}: {exc.strerror}") from exc
        try:
            data = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ScriptInvalid(f"{p} is not valid {'TOML' if p.suffix == '.toml' else 'JSON'}: {exc}") from exc
        return cls.parse(data, source=str(p))


def fingerprint(system_text: str) -> str:
    """The fingerprint of a first system message: 16 hex digits of its SHA-256."""
    return hashlib.sha256(system_text.encode("utf-8")).hexdigest()[:16]
