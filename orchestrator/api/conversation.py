"""Conversations from Python: an executor session on a workspace, each message a turn, its events the very objects
``reasonix -p --output-format stream-json`` prints (:mod:`orchestrator.headless.events`).

    async with open_conversation("path/to/repo", base_url=url) as chat:
        async with chat.stream("what does src/app.py do?") as events:
            async for event in events:
                print(event.type)
        print(chat.last_result.result)

Trio-native: :func:`open_conversation` opens the client and the MCP servers for the block; :meth:`ApiConversation.send`
runs one turn and returns its ``result`` line; :meth:`ApiConversation.stream` runs it in the background and yields its
events as they happen. :func:`run_task` / :func:`run_task_sync` are one task, start to end (the sync one for scripts
and notebooks, with no event loop of their own running).
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio

from orchestrator.headless.conversation import POINTER, HeadlessConversation, HeadlessOptions, check_resume
from orchestrator.headless.events import ResultLine, StreamJsonEvent, SystemInit
from orchestrator.launch import ConversationLaunch
from orchestrator.launch import open_conversation as open_executor_conversation
from orchestrator.policy.workspace_rule import check_workspace

EventHandler = Callable[[StreamJsonEvent], None]


class ApiConversation:
    """One open conversation (made by :func:`open_conversation`). Turns run one at a time."""

    def __init__(self, inner: HeadlessConversation) -> None:
        self._inner = inner
        self._handlers: list[EventHandler] = []
        self.last_result: ResultLine | None = None
        """The ``result`` line of the latest turn."""

    @property
    def session_id(self) -> str:
        """Pass it to :func:`open_conversation` (``resume=``) or ``reasonix -p --resume`` to continue."""
        return self._inner.session_id

    @property
    def init(self) -> SystemInit:
        """What the conversation works with (model, tools, workspace), as the ``system``/``init`` line."""
        return self._inner.init_event()

    def _dispatch(self, event: StreamJsonEvent) -> None:
        for handler in list(self._handlers):
            handler(event)

    async def send(self, text: str, *, on_event: EventHandler | None = None) -> ResultLine:
        """One turn to its end; ``on_event`` hears each of its events. A DeepSeek error or a reached limit is an
        error result (``is_error``), not an exception; cancellation propagates and leaves the journal consistent."""
        if on_event is not None:
            self._handlers.append(on_event)
        try:
            self.last_result = await self._inner.send(text)
        finally:
            if on_event is not None:
                self._handlers.remove(on_event)
        return self.last_result

    @asynccontextmanager
    async def stream(self, text: str) -> AsyncIterator[trio.MemoryReceiveChannel[StreamJsonEvent]]:
        """One turn, run in the background; iterate the channel for its events (the ``result`` line last). Leaving
        the block early cancels the turn."""
        send, receive = trio.open_memory_channel[StreamJsonEvent](math.inf)

        async def turn() -> None:
            async with send:
                await self.send(text, on_event=send.send_nowait)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn)
            async with receive:
                yield receive
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_conversation(
    workspace: str | Path = ".",
    *,
    model: str = "flash",
    base_url: str | None = None,
    resume: str | None = None,
    permission_mode: str = "auto",
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    allowed_tools: Iterable[str] | None = None,
    env: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[ApiConversation]:
    """A conversation on ``workspace``, built as ``reasonix -p`` builds it (the configuration of the workspace, its
    sandbox and permission rules, its MCP servers). ``resume`` continues a conversation by its ``session_id``.
    Raises :class:`~orchestrator.errors.ReasonixError` for a configuration problem, a missing key or an unknown
    ``resume`` id, before anything is sent."""
    environ = dict(os.environ if env is None else env)
    root = check_workspace(Path(workspace))
    mode = "read-only" if permission_mode in ("plan", "read-only") else permission_mode
    if resume is not None:
        check_resume(root, resume)
    conversation = open_executor_conversation(
        ConversationLaunch(
            workspace=root,
            model=model,
            permissions=mode,
            read_only=mode == "read-only",
            base_url=base_url,
            resume=resume,
            pointer=POINTER,
            max_budget_usd=max_budget_usd,
            allowed_tools=frozenset(allowed_tools) if allowed_tools is not None else None,
        ),
        env=environ,
        transport=transport,
    )
    async with conversation.client, conversation.opened():
        holder: list[ApiConversation] = []
        inner = HeadlessConversation(
            conversation,
            on_event=lambda event: holder[0]._dispatch(event),
            options=HeadlessOptions(max_turns=max_turns, permission_mode=mode),
        )
        holder.append(ApiConversation(inner))
        yield holder[0]


async def run_task(
    prompt: str, workspace: str | Path = ".", *, on_event: EventHandler | None = None, **options: object
) -> ResultLine:
    """One task, start to end: :func:`open_conversation` with ``options``, one turn, its ``result`` line."""
    async with open_conversation(workspace, **options) as chat:  # type: ignore[arg-type]
        return await chat.send(prompt, on_event=on_event)


def run_task_sync(
    prompt: str, workspace: str | Path = ".", *, on_event: EventHandler | None = None, **options: object
) -> ResultLine:
    """:func:`run_task` from plain Python (a script, a notebook cell): runs its own Trio loop."""
    result: ResultLine = trio.run(lambda: run_task(prompt, workspace, on_event=on_event, **options))
    return result
