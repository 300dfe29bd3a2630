"""Recording a live run as a replayable scenario (``--record FILE``), and comparing a replay's requests with it.

:class:`RecordingTransport` wraps the client's httpx transport: it keeps each chat request's body and the reply as it
came over the wire (SSE text or JSON), whole or broken. It never looks at headers, so the API key and the
``Authorization`` header cannot end up in a recording. :class:`Recorder` snapshots the workspace when a run starts
and writes the scenario when it ends::

    recorder = Recorder.start(workspace)
    client = build_client(resolved, transport=recorder.transport())
    ... run ...
    recorder.write(path, command="run", objective=task, status=summary.status)

A recorded scenario's emulator script is derived from the recorded replies (failed attempts become faults on the
reply that followed them), so ``reasonix replay`` plays the same conversation back offline; the recorded requests
let it report prompt drift (:mod:`orchestrator.replay.drift`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pathspec

from orchestrator import executor_prompt
from orchestrator.goal import prompts as goal_prompts
from orchestrator.goal.runner import GoalOptions
from orchestrator.review.reviewer import ReviewDecision, Reviewer
from plans import Plan
from scenarios import Expectations, RecordedExchange, ReviewAnswer, Scenario, ScenarioSettings
from scenarios.emulator import DropFault, HttpStatusFault, ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.tools.gateway import GatewayRoot
from sessions.wire import (
    ChatCompletion,
    DeepSeekError,
    Reply,
    SseData,
    SseParser,
    StreamAssembler,
    decode_chunk,
    reply_from_completion,
)

SKIP_DIRS = frozenset({".git", ".reasonix", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache"})
MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 2000
KNOWN_SESSIONS: tuple[tuple[str, str], ...] = (
    ("planner", goal_prompts.PLANNER_SYSTEM_PROMPT),
    ("executor", goal_prompts.EXECUTOR_SYSTEM_PROMPT),
    ("executor", executor_prompt.EXECUTOR_RUN_SYSTEM),
)


# ------------------------------------------------------------------------------------------------- transport


@dataclass
class CapturedExchange:
    """One chat request and its reply as exchanged (one HTTP attempt)."""

    request: bytes
    status: int
    reply: bytearray = field(default_factory=bytearray)
    complete: bool = False
    """The reply body was read to its end (a dropped connection leaves this False)."""

    def request_json(self) -> dict[str, Any]:
        value = json.loads(self.request)
        return value if isinstance(value, dict) else {"body": value}

    @property
    def system_text(self) -> str | None:
        messages = self.request_json().get("messages") or []
        first = messages[0] if messages and isinstance(messages[0], dict) else {}
        content = first.get("content") if first.get("role") == "system" else None
        return content if isinstance(content, str) else None


class _TeeStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, exchange: CapturedExchange) -> None:
        self._inner = inner
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._exchange.reply += chunk
            yield chunk
        self._exchange.complete = True

    async def aclose(self) -> None:
        await self._inner.aclose()


class RecordingTransport(httpx.AsyncBaseTransport):
    """An httpx transport that keeps every chat-completions request body and reply. Headers are never kept."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx.AsyncHTTPTransport()
        self.exchanges: list[CapturedExchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        if not request.url.path.rstrip("/").endswith("/chat/completions"):
            return response
        exchange = CapturedExchange(request=bytes(body), status=response.status_code)
        self.exchanges.append(exchange)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_TeeStream(response.stream, exchange),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


# ----------------------------------------------------------------------------------------------- sessions


def session_name(system_text: str | None) -> str | None:
    """``planner`` / ``executor`` for our own system prompts (standing memory may follow them), else ``None``."""
    if system_text is None:
        return None
    for name, prompt in KNOWN_SESSIONS:
        if system_text.startswith(prompt.rstrip()):
            return name
    return None


def session_names(exchanges: Sequence[CapturedExchange]) -> list[str]:
    """A session name per exchange: ours by prompt, others ``session-N`` in order of first appearance."""
    others: dict[str | None, str] = {}
    out = []
    for ex in exchanges:
        system = ex.system_text
        name = session_name(system)
        if name is None:
            name = others.setdefault(system, f"session-{len(others) + 1}")
        out.append(name)
    return out


def parse_reply(data: bytes | bytearray) -> Reply | None:
    """The whole reply in a recorded body (SSE or JSON), or ``None`` when it is not whole."""
    text = bytes(data).strip()
    try:
        if text.startswith(b"{"):
            return reply_from_completion(ChatCompletion.model_validate_json(text))
        assembler = StreamAssembler()
        for item in SseParser().feed(bytes(data) + b"\n"):
            if isinstance(item, SseData):
                assembler.feed(decode_chunk(item.payload))
        return assembler.finish() if assembler.finished else None
    except (DeepSeekError, ValueError):
        return None


def _chunks(data: bytes | bytearray) -> int:
    return sum(1 for item in SseParser().feed(bytes(data) + b"\n") if isinstance(item, SseData))


def to_recorded(exchanges: Sequence[CapturedExchange]) -> list[RecordedExchange]:
    out = []
    for name, ex in zip(session_names(exchanges), exchanges, strict=True):
        reply = parse_reply(ex.reply) if ex.status == 200 and ex.complete else None
        usage = reply.usage.model_dump(mode="json", exclude_none=True) if reply and reply.usage else None
        out.append(
            RecordedExchange(
                session=name,
                request=ex.request_json(),
                reply={
                    "status": ex.status,
                    "complete": ex.complete,
                    "body": bytes(ex.reply).decode("utf-8", "replace"),
                },
                usage=usage,
            )
        )
    return out


def _reply_spec(reply: Reply, faults: list[Any]) -> ReplySpec:
    msg = reply.message
    return ReplySpec(
        reasoning=msg.reasoning_content or "",
        content=msg.content or "",
        tool_calls=tuple(
            ToolCallSpec(name=c.function.name, arguments=c.function.arguments, id=c.id) for c in msg.tool_calls
        ),
        finish_reason=reply.finish_reason,
        faults=tuple(faults),
    )


def derive_script(recorded: Sequence[RecordedExchange]) -> Script:
    """An emulator script that gives back the recorded replies, per session, in order.

    A failed attempt (429 / 500 / 503, or a reply broken off) becomes a fault on the reply that followed it. A lone
    session catches every request (so a drifted system prompt still gets its replies and the drift is reported);
    several sessions are told apart by the first line of their system prompt.
    """
    order: list[str] = []
    replies: dict[str, list[ReplySpec]] = {}
    pending: dict[str, list[Any]] = {}
    first_line: dict[str, str] = {}
    for ex in recorded:
        if ex.session not in replies:
            order.append(ex.session)
            replies[ex.session] = []
            messages = ex.request.get("messages") or [{}]
            system = messages[0].get("content") if isinstance(messages[0], dict) else None
            first_line[ex.session] = (system or "").split("\n", 1)[0]
        status = int(ex.reply.get("status", 0))
        body = str(ex.reply.get("body", "")).encode("utf-8")
        reply = parse_reply(body) if status == 200 and ex.reply.get("complete") else None
        faults = pending.setdefault(ex.session, [])
        if reply is not None:
            replies[ex.session].append(_reply_spec(reply, faults))
            pending[ex.session] = []
        elif status in (429, 500, 503):
            faults.append(HttpStatusFault(status=status))
        else:
            faults.append(DropFault(after_chunks=_chunks(body)))
    distinct = len(set(first_line.values())) == len(order)
    sessions = []
    for name in order:
        matcher: dict[str, str] = {}
        if len(order) > 1 and distinct and first_line[name]:
            matcher["system_contains"] = first_line[name]
        sessions.append(SessionSpec(key=name, replies=tuple(replies[name]), **matcher))
    return Script(sessions=tuple(sessions))


# ------------------------------------------------------------------------------------------------ workspace


def snapshot_workspace(root: Path) -> dict[str, str]:
    """The workspace's text files (path → text): what ``.gitignore`` ignores, tool and VCS folders, binary and large
    files are left out."""
    gateway = GatewayRoot(root)  # the workspace after a run: read beneath it, never through a link by name
    ignore = gateway.try_read(".gitignore", limit=MAX_FILE_BYTES)
    rules = ignore.data.decode("utf-8", "replace").splitlines() if ignore is not None else None
    spec = pathspec.PathSpec.from_lines("gitwildmatch", rules) if rules is not None else None
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file() or path.is_symlink():
            continue
        if spec is not None and spec.match_file(rel.as_posix()):
            continue
        found = gateway.try_read(rel.as_posix(), limit=MAX_FILE_BYTES)
        if found is None or found.truncated:
            continue
        try:
            text = found.data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files[rel.as_posix()] = text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text's newline mode
        if len(files) >= MAX_FILES:
            break
    return files


def write_recorded_scenario(
    path: Path,
    workspace: Mapping[str, str],
    command: str,
    objective: str,
    exchanges: Sequence[CapturedExchange],
    *,
    status: str | None = None,
    settings: ScenarioSettings | None = None,
    name: str | None = None,
    review: Sequence[ReviewAnswer] = (),
) -> Scenario:
    """Write a recorded scenario (``origin: recorded``): the workspace as it was at the start, every exchange, usage
    as reported, and a script derived from the replies. The expected status is the one the live run ended with."""
    recorded = to_recorded(exchanges)
    slug = "".join(c if c.isalnum() else "-" for c in (name or path.stem).lower()).strip("-") or "recorded"
    scenario = Scenario(
        name=slug,
        title=f"Recorded {command}: {objective[:60]}",
        description=f"Recorded from a live `reasonix {command}` run: the replies are the model's, as exchanged.",
        origin="recorded",
        command=command,
        objective=objective,
        workspace=dict(workspace),
        settings=settings or ScenarioSettings(),
        script=derive_script(recorded),
        review=tuple(review),
        expect=Expectations(status=status),
        recorded=tuple(recorded),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scenario.model_dump_json(indent=1, exclude_defaults=True) + "\n", encoding="utf-8")
    return scenario


class RecordingReviewer:
    """Passes each plan review to ``inner`` and keeps the person's decisions as the scenario's review answers.
    Automatic approvals (``--yes``) are not kept: a scenario without answers is approved automatically."""

    def __init__(self, inner: Reviewer) -> None:
        self.inner = inner
        self.answers: list[ReviewAnswer] = []

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        decision = await self.inner.review(plan, diff_text=diff_text)
        if not decision.automatic:
            edited = decision.plan.model_dump(mode="json") if decision.plan is not None else None
            self.answers.append(ReviewAnswer(decision=decision.kind, feedback=decision.feedback, plan=edited))
        return decision


def settings_from_goal_options(options: GoalOptions) -> ScenarioSettings:
    """The scenario settings that replay a goal as it was run (preset, budgets, escalation, thinking)."""
    return ScenarioSettings(
        preset=options.escalation.preset,
        budget_usd=options.budget.usd,
        max_requests=options.budget.requests,
        max_minutes=options.budget.minutes,
        max_step_attempts=options.max_step_attempts,
        failure_threshold=options.escalation.failure_threshold,
        max_pro_turns=options.escalation.max_pro_turns,
        context_window=options.context_window,
        thinking=options.thinking,
        reasoning_effort=options.reasoning_effort,
        parallel=options.parallel,
    )


class Recorder:
    """The recording of one live run: the workspace snapshot taken at the start, the transport that captures the
    exchanges and (for ``goal`` / ``plan``) the reviewer that keeps the review answers.

    The hook for ``goal`` / ``plan`` / ``exec`` with ``--record FILE``::

        recorder = Recorder.start(workspace)                       # before anything is written
        client = build_client(resolved, transport=recorder.transport())
        reviewer = recorder.reviewer(reviewer)                     # optional: keeps a person's review answers
        outcome = await runner.run(mode)
        recorder.write(path, command=mode, objective=objective, status=outcome.status,
                       settings=settings_from_goal_options(options))
    """

    def __init__(self, workspace: Path, snapshot: dict[str, str]) -> None:
        self.workspace = workspace
        self.snapshot = snapshot
        self._transport: RecordingTransport | None = None
        self._reviewer: RecordingReviewer | None = None

    @classmethod
    def start(cls, workspace: Path) -> Recorder:
        return cls(workspace, snapshot_workspace(workspace))

    def transport(self, inner: httpx.AsyncBaseTransport | None = None) -> RecordingTransport:
        if self._transport is None:
            self._transport = RecordingTransport(inner)
        return self._transport

    def reviewer(self, inner: Reviewer) -> RecordingReviewer:
        self._reviewer = RecordingReviewer(inner)
        return self._reviewer

    @property
    def exchanges(self) -> list[CapturedExchange]:
        return self._transport.exchanges if self._transport is not None else []

    def write(
        self, path: Path, *, command: str, objective: str, status: str | None, settings: ScenarioSettings | None = None
    ) -> Scenario | None:
        """The recording written to ``path``; None, and nothing written, when no request got a whole reply (a run
        stopped by its budget or its runtime before its first answer): there is nothing a replay could play."""
        if not to_recorded(self.exchanges):
            return None
        answers = self._reviewer.answers if self._reviewer is not None else []
        return write_recorded_scenario(
            path, self.snapshot, command, objective, self.exchanges, status=status, settings=settings, review=answers
        )


def recording_line(written: Scenario | None, exchanges: int, path: Path) -> str:
    """What ``--record`` says at the end of a run."""
    if written is None:
        return f"nothing recorded to {path}: no request got a whole reply before the run ended"
    return f"recorded {exchanges} exchanges to {path}"
