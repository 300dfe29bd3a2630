"""Building the pieces of a run from the configuration: the DeepSeek client and an executor session.

Nothing here sends a request. The run id names the journal directory only; it is never sent to the model (DESIGN §3.7),
so a second run in the same workspace sends the same prefix bytes and hits the cache from its first request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from orchestrator.config import Config, ResolvedConfig
from orchestrator.errors import ReasonixError
from orchestrator.prompts import EXECUTOR_RUN_SYSTEM
from sessions.client import ClientSettings, DeepSeekClient
from sessions.events import SessionEvent
from sessions.memory import load_standing_memory, user_config_dir
from sessions.prefix import build_prefix
from sessions.prices import PriceError
from sessions.session import ReplySource, Session, SessionSettings
from sessions.tools.base import ToolContext
from sessions.tools.registry import ToolRegistry, default_registry

DEFAULT_BASE_URL = Config().base_url
LOCAL_PLACEHOLDER_KEY = "sk-local-placeholder"
"""Sent to a non-default base URL (the emulator, a local proxy) when no key is set: they accept any non-empty key."""
EXECUTOR_SESSION = "executor"


class MissingApiKeyError(ReasonixError):
    """The user is at fault: no API key for the real DeepSeek endpoint."""


class WorkspaceError(ReasonixError):
    """The user is at fault: the workspace is not a directory we can work in."""


class ModelChoiceError(ReasonixError):
    """The user is at fault: a model id with no known price."""


@dataclass(frozen=True)
class RunOptions:
    """What ``reasonix run`` lets the user choose for one executor session."""

    model: str = "flash"
    """``flash``, ``pro`` (the configured ids) or any model id."""
    read_only: bool = False
    max_requests: int | None = None
    """Requests allowed for the task; ``None`` keeps the session default."""


def run_dir(workspace: Path, run_id: str) -> Path:
    return workspace / ".reasonix" / "runs" / run_id


def resolve_model(config: Config, choice: str) -> str:
    """``flash`` / ``pro`` → the configured model id; anything else is taken as an id."""
    if choice == "flash":
        return config.models.flash
    if choice == "pro":
        return config.models.pro
    return choice


def check_workspace(workspace: Path) -> Path:
    path = workspace.expanduser().resolve()
    if not path.is_dir():
        raise WorkspaceError(f"the workspace {workspace} is not a directory; create it or pass --workspace DIR")
    return path


def api_key_for(resolved: ResolvedConfig) -> str:
    """The key to send. Raises :class:`MissingApiKeyError` when the real API has no key; a local endpoint (the
    emulator, a proxy) gets a placeholder, since it accepts any non-empty key."""
    config = resolved.config
    if resolved.api_key is not None:
        return resolved.api_key
    if config.base_url == DEFAULT_BASE_URL:
        raise MissingApiKeyError(
            f"no API key: set {config.api_key_env} (a key from https://platform.deepseek.com/api_keys), "
            f"or pass --base-url to a local emulator (start one with `reasonix emulate`)"
        )
    return LOCAL_PLACEHOLDER_KEY


def build_client(
    resolved: ResolvedConfig,
    *,
    settings: ClientSettings | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> DeepSeekClient:
    """The client for the configured endpoint. Raises :class:`MissingApiKeyError` when the real API has no key.
    ``transport`` replaces the HTTP transport (``--record`` passes a recording one)."""
    config = resolved.config
    key = api_key_for(resolved)
    settings = settings or ClientSettings(**config.client_settings_kwargs(), api_key_env=config.api_key_env)
    return DeepSeekClient(base_url=config.base_url, api_key=key, settings=settings, transport=transport)


def build_executor(
    resolved: ResolvedConfig,
    workspace: Path,
    client: DeepSeekClient,
    *,
    journal_path: Path | None,
    options: RunOptions | None = None,
    on_event: Callable[[SessionEvent], None] | None = None,
    registry: ToolRegistry | None = None,
    reply_source: ReplySource | None = None,
    memory_config_dir: Path | None = None,
) -> Session:
    """An executor session with the frozen prefix of ``reasonix run``: the run prompt, the built-in tools, and the
    standing memory of ``workspace`` (and of the user's config directory)."""
    options = options or RunOptions()
    config = resolved.config
    model = resolve_model(config, options.model)
    price_book = config.price_book()
    try:
        price_book.family_of(model)
    except PriceError as exc:
        raise ModelChoiceError(f"--model {options.model}: {exc}") from exc
    registry = registry or default_registry()
    memory = load_standing_memory(workspace, config_dir=memory_config_dir or user_config_dir())
    prefix = build_prefix(EXECUTOR_RUN_SYSTEM, Session.schemas_for(registry), memory)
    base = SessionSettings()
    settings = SessionSettings(
        model=model,
        thinking=config.thinking,
        reasoning_effort=config.reasoning_effort,
        read_only=options.read_only,
        max_requests_per_turn=options.max_requests or base.max_requests_per_turn,
    )
    return Session.start(
        journal_path=journal_path,
        name=EXECUTOR_SESSION,
        client=client,
        prefix=prefix,
        registry=registry,
        tool_context=ToolContext(root=workspace),
        settings=settings,
        on_event=on_event,
        price_book=price_book,
        reply_source=reply_source,
    )
