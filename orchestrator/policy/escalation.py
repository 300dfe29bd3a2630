"""Escalation from flash to pro (DESIGN §5 "Escalation", issue 6 item 5).

:class:`Escalator` is a session's :class:`~sessions.session.ReplySource`: it decides, request by request, whether the
request goes to flash or to pro.

* Preset ``flash``: every request goes to flash, untouched (a marker stays in the content as the model wrote it).
* Preset ``pro``: every request goes to pro; the first request of each turn announces it.
* Preset ``auto``: a turn goes to pro from its first request when the orchestrator flags it (a step's ``needs_pro``
  hint), and for the rest of the turn once the turn's failure counter reaches the threshold. Otherwise the request
  streams from flash; its content is held back (at most ``hold_back_chars``) until it is clear whether it starts with
  the marker. On a marker the flash stream is abandoned (the client closes the connection), the aborted call is
  accounted (the server's usage if it came, else an estimate from our tokenizer, marked as one), and the *identical*
  body, only the model changed, goes to pro. The rest of that turn stays on pro; the next turn is flash again.
  A per-goal cap bounds the turns that go to pro; when it is reached, requests stay on flash and nothing claims an
  escalation.

Every escalation is reported through ``on_escalation`` as an :class:`~orchestrator.events.Escalated` event:
none is ever silent, and the cost of the aborted flash call is in the event and in the session's costs.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import trio
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.events import Escalated, ProAskedForPro
from orchestrator.policy.marker import DEFAULT_HOLD_BACK, MARKER_CLOSE, MARKER_OPEN, MarkerDetector, find_marker
from sessions.accounting import CACHE_UNIT_TOKENS, tokens
from sessions.wire import (
    ChatRequest,
    Completed,
    ContentDelta,
    ReasoningDelta,
    Reply,
    ReplyRequest,
    StreamEvent,
    StreamRestarted,
    ToolCallArgumentsDelta,
    ToolCallStarted,
    Usage,
    stream_reply,
)

log = logging.getLogger(__name__)

Preset = Literal["flash", "auto", "pro"]
Trigger = Literal["marker", "failures", "hint", "preset"]
Emit = Callable[[StreamEvent], None]


class EscalationPolicy(BaseModel):
    """How a goal uses pro. Config and ``--preset`` fill it in."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    preset: Preset = "auto"
    failure_threshold: int = Field(default=3, ge=1)
    """Failures within one turn (edit mismatches, repaired calls, storm suppressions, failed verifications) that send
    the rest of the turn to pro."""
    max_pro_turns: int | None = Field(default=10, ge=0)
    """Per goal, in ``auto``: how many turns may go to pro (None: no cap). The ``pro`` preset is the user's explicit
    choice and is not capped."""
    hold_back_chars: int = Field(default=DEFAULT_HOLD_BACK, ge=len(MARKER_OPEN) + len(MARKER_CLOSE), le=256)


@dataclass(slots=True)
class _Turn:
    hint: bool = False
    hint_reason: str = ""
    pro: Trigger | None = None
    """Set once the turn went to pro: every further request of the turn goes there too."""
    cap_noted: bool = False


@dataclass(frozen=True, slots=True)
class _FlashRecord:
    """The last flash request of a session that came back whole, with the server's usage: the base of estimates."""

    body: bytes
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class _Cut:
    """A flash stream abandoned at a marker."""

    reason: str
    content: str
    reasoning: str


class Escalator:
    """A :class:`~sessions.session.ReplySource` that escalates single turns from flash to pro.

    One escalator serves every session of a goal (the cap is per goal); the state of the current turn is kept per
    session name. Call :meth:`begin_turn` before each step or planner turn: it is what ends the previous turn's
    escalation (without it, a session that went to pro stays there). It sees a session only through the
    :class:`~sessions.session.ReplyRequest` of each request.
    """

    def __init__(
        self,
        policy: EscalationPolicy,
        *,
        flash_model: str,
        pro_model: str,
        on_escalation: Callable[[Escalated], None],
        on_pro_marker: Callable[[ProAskedForPro], None] | None = None,
    ) -> None:
        self.policy = policy
        self.on_pro_marker = on_pro_marker
        """Told when pro itself writes the marker (nothing to escalate to: its reply stands)."""
        self.flash_model = flash_model
        self.pro_model = pro_model
        self.on_escalation = on_escalation
        self.pro_turns = 0
        """Turns of this goal that went to pro (all presets)."""
        self.escalations = 0
        self.escalated: Counter[str] = Counter()
        """Escalated events emitted per session key (a subagent's figure)."""
        """Escalated events emitted."""
        self._capped_turns = 0
        self._turns: dict[str, _Turn] = {}
        self._flash: dict[str, _FlashRecord] = {}

    # ------------------------------------------------------------------------------------------------ turns

    def begin_turn(self, session: str, *, needs_pro: bool = False, reason: str = "") -> None:
        """A new turn of the session named ``session`` begins: it starts on flash unless ``needs_pro`` (a step's
        hint) says otherwise."""
        self._turns[session] = _Turn(hint=needs_pro, hint_reason=reason)

    @property
    def cap_reached(self) -> bool:
        cap = self.policy.max_pro_turns
        return cap is not None and self._capped_turns >= cap

    def _turn(self, session: str) -> _Turn:
        turn = self._turns.get(session)
        if turn is None:
            turn = self._turns[session] = _Turn()
        return turn

    def _pending_trigger(self, call: ReplyRequest, turn: _Turn) -> tuple[Trigger, str] | None:
        if turn.hint:
            return "hint", turn.hint_reason or "the step is marked as needing pro"
        threshold = self.policy.failure_threshold
        if call.failures >= threshold:
            return "failures", (
                f"{call.failures} failures in this turn (repairs, storms, edit mismatches or failed "
                f"verifications; threshold {threshold}): the rest of the turn goes to pro"
            )
        return None

    def _go_pro(
        self,
        session: str,
        turn: _Turn,
        request: ChatRequest,
        trigger: Trigger,
        reason: str,
        *,
        cut: _Cut | None = None,
        flash_cost_usd: float = 0.0,
    ) -> None:
        turn.pro = trigger
        self.pro_turns += 1
        if self.policy.preset == "auto":
            self._capped_turns += 1
        self.escalations += 1
        self.escalated[session] += 1
        self.on_escalation(
            Escalated(
                session=session,
                trigger=trigger,
                reason=reason,
                from_model=request.model,
                to_model=self.pro_model,
                flash_cost_usd=flash_cost_usd,
                flash_cost_estimated=cut is not None,
                wasted_chars=len(cut.content) if cut is not None else 0,
                wasted_reasoning_chars=len(cut.reasoning) if cut is not None else 0,
            )
        )

    def _note_cap(self, session: str, turn: _Turn, why: str) -> None:
        if not turn.cap_noted:
            turn.cap_noted = True
            log.info(
                "%s: stays on flash although %s: the goal's cap of %s pro turns is reached",
                session,
                why,
                self.policy.max_pro_turns,
            )

    # --------------------------------------------------------------------------------------------- requests

    async def __call__(self, call: ReplyRequest, emit: Emit) -> Reply:
        preset = self.policy.preset
        if preset == "flash":
            return await stream_reply(call, emit)
        session, request = call.session, call.request
        turn = self._turn(session)
        if turn.pro is None:
            if preset == "pro":
                self._go_pro(session, turn, request, "preset", "the preset is pro")
            else:
                pending = self._pending_trigger(call, turn)
                if pending is not None and self.cap_reached:
                    self._note_cap(session, turn, pending[1])
                elif pending is not None:
                    self._go_pro(session, turn, request, *pending)
        if turn.pro is not None:
            return await self._pro(call, emit)
        if self.cap_reached:
            reply = await stream_reply(call, emit)
            self._remember(session, call.body, reply)
            return reply
        outcome = await self._stream_flash(call, emit)
        if isinstance(outcome, Reply):
            self._remember(session, call.body, outcome)
            return outcome
        usage = await self._estimate(session, call.body, outcome)
        cost = call.account_estimate(usage, request.model)
        reason = outcome.reason or "flash asked for pro"
        self._go_pro(session, turn, request, "marker", reason, cut=outcome, flash_cost_usd=cost)
        call.started(self.pro_model)  # the aborted flash call was a request; the pro call is another
        return await self._pro(call, emit)

    async def _pro(self, call: ReplyRequest, emit: Emit) -> Reply:
        """The same request on pro: the session's bytes with only the model changed."""
        pro_request = call.request.model_copy(update={"model": self.pro_model})
        reply = await call.client.complete(pro_request, body=call.body_for(self.pro_model), on_event=emit)
        marker = find_marker(reply.message.content or "", self.policy.hold_back_chars)
        if marker is not None and self.on_pro_marker is not None:
            reason = " ".join((marker.group(1) or "").split())
            self.on_pro_marker(ProAskedForPro(session=call.session, model=self.pro_model, reason=reason))
        return reply.model_copy(update={"model": self.pro_model})

    async def _stream_flash(self, call: ReplyRequest, emit: Emit) -> Reply | _Cut:
        """Stream from flash, holding content back until the marker question is settled; abandon it on a marker."""
        detector = MarkerDetector(self.policy.hold_back_chars)
        content: list[str] = []
        reasoning: list[str] = []
        async with call.client.stream(call.request, body=call.body) as events:
            async for event in events:
                if isinstance(event, ContentDelta):
                    content.append(event.text)
                    shown = detector.feed(event.text)
                    if detector.decision == "marker":
                        # Leaving the block cancels the reader, which closes the response and its connection.
                        return _Cut(reason=detector.reason, content="".join(content), reasoning="".join(reasoning))
                    if shown:
                        emit(ContentDelta(text=shown))
                    continue
                if isinstance(event, ReasoningDelta):
                    reasoning.append(event.text)
                elif isinstance(event, ToolCallStarted | ToolCallArgumentsDelta | Completed):
                    rest = detector.finish()  # content streams before tool calls: it is over
                    if rest:
                        emit(ContentDelta(text=rest))
                elif isinstance(event, StreamRestarted):
                    detector = MarkerDetector(self.policy.hold_back_chars)  # the failed attempt's text is void
                    content.clear()
                    reasoning.clear()
                emit(event)
                if isinstance(event, Completed):
                    return event.reply
        raise AssertionError("the client's stream ended without Completed or an error")  # pragma: no cover

    # ------------------------------------------------------------------------------------------------- costs

    def _remember(self, session: str, body: bytes, reply: Reply) -> None:
        if reply.usage is not None:
            self._flash[session] = _FlashRecord(body, reply.usage.prompt_tokens, reply.usage.completion_tokens)

    async def _estimate(self, session: str, body: bytes, cut: _Cut) -> Usage:
        """What the aborted flash call used, by our tokenizer (the server sends usage only with the last chunk).

        Input: the last whole flash request's prompt tokens plus the tokens of what the log appended since; what that
        request sent and produced is assumed cached (in whole units, as the server stores it). With no such request
        (the first flash request, or the log was rewritten), the whole body is counted and nothing assumed cached.
        """
        record = self._flash.get(session)
        if record is not None and len(body) >= len(record.body) and body.startswith(record.body[:-2]):
            appended = body[len(record.body) - 2 :].decode("utf-8", "replace")
            prompt = record.prompt_tokens + tokens.count(appended)
            cached = (record.prompt_tokens + record.completion_tokens) // CACHE_UNIT_TOKENS * CACHE_UNIT_TOKENS
            hit = min(prompt, cached)
        else:
            # A long body takes about a second per 2 MB: off the event loop, and abandoned if the turn is cancelled.
            text = body.decode("utf-8", "replace")
            prompt = await trio.to_thread.run_sync(tokens.count, text, abandon_on_cancel=True)
            hit = 0
        completion = tokens.count(cut.reasoning + cut.content)
        return Usage.counted(prompt, hit, completion)
