"""A ``reasonix run`` task in-process: the executor conversation opened through
:func:`orchestrator.launch.open_conversation`, as the command opens it, with a test's configuration, client and gate
(no sandbox, no MCP servers, no checkpoints unless asked)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.build import RunOptions
from orchestrator.config.model import ResolvedConfig
from orchestrator.conversation import ExecutorConversation
from orchestrator.hooks.hooks import Hooks
from orchestrator.launch import ConversationLaunch, open_conversation
from orchestrator.policy.commands import CommandSetup
from sessions.sandbox import NoSandbox
from sessions.wire import DeepSeekClient


def task_conversation(
    resolved: ResolvedConfig,
    workspace: Path,
    *,
    client: DeepSeekClient | None = None,
    options: RunOptions | None = None,
    hooks: Hooks | None = None,
    memory_config_dir: Path | None = None,
    on_event: Callable[[Any], None] | None = None,
    run_id: str | None = None,
    checkpoints: bool = False,
) -> ExecutorConversation:
    """The conversation of ``reasonix run`` on ``workspace``, its session built."""
    options = options or RunOptions()
    commands = CommandSetup(sandbox=options.sandbox or NoSandbox(), gate=options.gate, notice=None, hooks=hooks)  # type: ignore[arg-type]
    conversation = open_conversation(
        ConversationLaunch(
            workspace=workspace,
            model=options.model,
            read_only=options.read_only,
            max_requests=options.max_requests,
            run_id=run_id,
            checkpoints=checkpoints,
        ),
        env={},
        resolved=resolved,
        commands=commands,
        client=client,
        on_event=on_event,
        memory_config_dir=memory_config_dir,
    )
    conversation.start()
    return conversation
