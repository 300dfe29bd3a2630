"""Sessions with their tiers on (or off) against the emulator, and a scripted long session, for the tier tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from scenarios.emulator import ReplySpec, ToolCallSpec
from sessions.events import SessionEvent
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tiers import Archive, with_recall
from sessions.tools.base import ToolContext
from sessions.tools.registry import default_registry
from sessions.wire.client import DeepSeekClient

from .session_support import SYSTEM, BodyRecorder

PEAK = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
"""A Monday at 02:00 UTC: flash at its peak prices, so the snip rule's figures do not depend on the hour."""
LINE = "value_{i:03} = compute(alpha, beta, gamma)  # the {i}th line of file {f}, kept stable\n"


def write_files(ws: Path, count: int, lines: int, prefix: str = "f") -> None:
    for f in range(count):
        body = "".join(LINE.format(i=i, f=f) for i in range(lines))
        (ws / f"{prefix}{f}.txt").write_text(f"FACT-{prefix}{f} planted at the top\n{body}", encoding="utf-8")


def read_turn(i: int, prefix: str = "f") -> tuple[ReplySpec, ReplySpec]:
    """One turn: read ``f<i>.txt`` (call id ``call_<i>``), then a short answer."""
    call = ToolCallSpec(id=f"call_{prefix}{i}", name="read_file", arguments={"path": f"{prefix}{i}.txt"})
    return ReplySpec(tool_calls=(call,)), ReplySpec(content=f"Read {prefix}{i}.txt.")


def tiered_session(
    client: DeepSeekClient,
    ws: Path,
    settings: SessionSettings,
    *,
    events: list[SessionEvent] | None = None,
    recorder: BodyRecorder | None = None,
    expected: Callable[[], int] | None = None,
    journal: str = "s.jsonl",
    resume: bool = False,
) -> Session:
    """A session like the executor's; with ``settings.tiers``, the recall tool over the archive beside its journal."""
    journal_path = ws / ".reasonix" / journal
    registry = default_registry(use_ripgrep=False)
    if settings.tiers:
        registry = with_recall(registry, Archive.beside(journal_path))
    prefix = build_prefix(SYSTEM, Session.schemas_for(registry), load_standing_memory(ws, stop_at=ws))
    open_session = Session.resume if resume else Session.start
    session = open_session(
        journal_path=journal_path,
        name="executor",
        client=client,
        prefix=prefix,
        registry=registry,
        tool_context=ToolContext(root=ws),
        settings=settings,
        on_event=events.append if events is not None else None,
        reply_source=recorder,
        clock=lambda: PEAK,
    )
    session.expected_requests = expected
    return session
