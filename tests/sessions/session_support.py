"""Building real sessions against the in-process emulator, for tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from scenarios.emulator import RunningEmulator, Script, open_emulator
from sessions.events import SessionEvent
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import ToolContext
from sessions.tools.registry import default_registry
from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.reply import ReplyRequest, stream_reply
from sessions.wire.stream import Reply, StreamEvent

SYSTEM = "You are the executor of a coding agent. Work in the workspace with the tools. [executor]"


class BodyRecorder:
    """A reply source that records the exact bytes of every request before sending it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
        self.bodies.append(call.body)
        return await stream_reply(call, emit)


def make_session(
    client: DeepSeekClient,
    workspace: Path,
    *,
    journal: Path | None,
    settings: SessionSettings | None = None,
    events: list[SessionEvent] | None = None,
    recorder: BodyRecorder | None = None,
    resume: bool = False,
) -> Session:
    registry = default_registry(use_ripgrep=False)
    prefix = build_prefix(SYSTEM, Session.schemas_for(registry), load_standing_memory(workspace, stop_at=workspace))
    kwargs: dict[str, Any] = dict(
        name="executor",
        client=client,
        registry=registry,
        tool_context=ToolContext(root=workspace),
        settings=settings or SessionSettings(),
        on_event=events.append if events is not None else None,
        reply_source=recorder,
    )
    if resume:
        assert journal is not None
        return Session.resume(journal_path=journal, prefix=prefix, **kwargs)
    return Session.start(journal_path=journal, prefix=prefix, **kwargs)


@asynccontextmanager
async def emulated(script: Script, **kw: Any) -> AsyncIterator[tuple[RunningEmulator, DeepSeekClient]]:
    async with open_emulator(script=script, **kw) as emu:
        client = DeepSeekClient(
            base_url=emu.base_url,
            api_key="test-key",
            settings=ClientSettings(backoff_initial_s=0.01, backoff_jitter_s=0),
        )
        async with client:
            yield emu, client
