"""The session of ``reasonix chat``: no tools, its own prefix (:data:`~orchestrator.executor_prompt.CHAT_SYSTEM`,
no tool schemas, the workspace's standing memory), fixed for the session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from orchestrator.build import SessionBuilder, resolve_model
from orchestrator.config.endpoints import session_limits
from orchestrator.config.model import ResolvedConfig
from orchestrator.executor_prompt import CHAT_SYSTEM
from sessions import Session, SessionEvent, SessionSettings
from sessions.tools import ToolRegistry
from sessions.wire import DeepSeekClient

CHAT_SESSION = "chat"


def build_chat(
    resolved: ResolvedConfig,
    workspace: Path,
    client: DeepSeekClient,
    *,
    model: str,
    journal_path: Path | None,
    on_event: Callable[[SessionEvent], None] | None = None,
    resume: bool = False,
    system_prompt: str = CHAT_SYSTEM,
) -> Session:
    """A session with the chat prefix and no tools (read-only: there is nothing it could change)."""
    config = resolved.config
    chosen = resolve_model(config, model)
    settings = SessionSettings(
        model=chosen,
        thinking=config.thinking,
        reasoning_effort=config.reasoning_effort,
        read_only=True,
        **session_limits(config, chosen),
    )
    builder = SessionBuilder(workspace, client, price_book=config.price_book())
    return builder(
        name=CHAT_SESSION,
        system_prompt=system_prompt,
        registry=ToolRegistry([]),
        settings=settings,
        journal_path=journal_path,
        on_event=on_event,
        resume=resume,
    )
