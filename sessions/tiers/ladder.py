"""A session's tiers at work: before each request, snip (when it pays), compact, or force (DESIGN §3.6 "Tiers").

* **snip** (past ``snip_ratio``): stale large tool results, older than the tail compaction would keep verbatim, become
  a stable head and tail with a marker, when :func:`~sessions.tiers.policy.choose_snip` says the saving over the
  rest of the session outweighs the one miss. The rewrite keeps every byte before the first snipped result.
* **compact** (past ``compaction_ratio``): the one-tier compaction, with every folded tool result and the folded
  transcript archived and named by an index at the end of the compacted block.
* **force** (past ``force_ratio``): every tool result but the newest reply's becomes a one-line placeholder, without
  asking DeepSeek anything; when the context is still past ``compaction_ratio``, a compaction follows.

Every original goes to the :class:`~sessions.tiers.archive.Archive` first; ``recall`` gives it back. Each rewrite's
reason starts with its tier's name, so the cache diagnostics of the next request name it (``log rewritten: snip:
…``), and a :class:`~sessions.events.Compacted` event reports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sessions.accounting import tokens
from sessions.accounting.prices import PriceBook
from sessions.compaction import Compactable, choose_cut, render_transcript
from sessions.events import Compacted
from sessions.log import LogEntry
from sessions.tiers.archive import Archive, safe_id
from sessions.tiers.policy import (
    SNIP_MIN_TOKENS,
    SnipCandidate,
    SnipChoice,
    Tier,
    TokenPrices,
    choose_snip,
    guess_remaining,
    tier_for,
)
from sessions.tiers.recall import RecallTool
from sessions.tiers.snip import RECALL_TOOL, markers_in, placeholder_text, recall_hint, snip_text
from sessions.tools.registry import ToolRegistry
from sessions.wire.messages import AssistantMessage, Message, ToolMessage


@dataclass(frozen=True, slots=True)
class Ratios:
    window: int
    snip: float
    compact: float
    force: float
    keep_tokens: int
    """What compaction keeps verbatim; a tool result older than that is stale."""


class TierSettings(Protocol):
    """The settings of a session that its tiers read (``SessionSettings``)."""

    @property
    def tiers(self) -> bool: ...
    @property
    def model(self) -> str: ...
    @property
    def context_window(self) -> int: ...
    @property
    def snip_ratio(self) -> float: ...
    @property
    def compaction_ratio(self) -> float: ...
    @property
    def force_ratio(self) -> float: ...
    @property
    def compaction_keep_ratio(self) -> float: ...


class Priced(Protocol):
    """A session's ledger, as the snip rule reads it: the price book, the clock, the requests made."""

    price_book: PriceBook
    clock: Callable[[], datetime]
    requests: int


class Ladder:
    """The tiers of one session: decides and applies them; remembers the last snip it weighed."""

    def __init__(
        self,
        *,
        archive: Archive,
        ratios: Ratios,
        prices: Callable[[], TokenPrices],
        remaining: Callable[[], int],
    ) -> None:
        self.archive = archive
        self.ratios = ratios
        self.prices = prices
        self.remaining = remaining
        self.last_choice: SnipChoice | None = None
        self.weighed = 0
        """Snips weighed so far (taken or not)."""
        self._counts: dict[bytes, int] = {}
        self._snipped: dict[bytes, int | None] = {}
        """A candidate's tokens once snipped, by its stored bytes (None: too short to snip)."""

    def counts(self, entries: Sequence[LogEntry]) -> list[int]:
        """Each entry's tokens (counted once per stored bytes; what left the log is forgotten)."""
        known = self._counts
        missing = [e.data for e in entries if e.data not in known]
        if missing:
            known.update(zip(missing, tokens.count_many([d.decode("utf-8") for d in missing]), strict=True))
        self._counts = {e.data: known[e.data] for e in entries}
        return [known[e.data] for e in entries]

    def tier(self, context_tokens: int) -> Tier | None:
        r = self.ratios
        return tier_for(context_tokens, r.window, snip=r.snip, compact=r.compact, force=r.force)

    async def step(self, session: Compactable, compact: Callable[[str], Awaitable[bool]]) -> Tier | None:
        """Apply the tier the context has reached; which one was applied (None: none was)."""
        before = session.context_tokens()
        tier = self.tier(before)
        if tier is None or len(session.log) < 4:
            return None
        share = f"context at {before} tokens passed {{:.0%}} of the window"
        applied: Tier | None = None
        if tier == "force":
            if self.force(session, share.format(self.ratios.force)):
                applied = "force"
                await _sync(session)
            tier = "compact" if self.tier(session.context_tokens()) in ("compact", "force") else None
        if tier == "compact":
            reason = f"compact: {share.format(self.ratios.compact)}" + (" after force" if applied else "")
            if await compact(reason):
                applied = "compact"
        elif tier == "snip" and self.snip(session, share.format(self.ratios.snip)):
            applied = "snip"
            await _sync(session)
        return applied

    # ------------------------------------------------------------------------------------------------- snip

    def candidates(self, entries: Sequence[LogEntry], counts: Sequence[int]) -> list[SnipCandidate]:
        """Stale large tool results not snipped yet, in log order."""
        messages = [e.message for e in entries]
        cut = choose_cut(messages, counts, self.ratios.keep_tokens)
        if cut is None:
            return []
        found: list[SnipCandidate] = []
        for i in range(cut):
            m = messages[i]
            if not isinstance(m, ToolMessage) or counts[i] < SNIP_MIN_TOKENS:
                continue
            archive_id = safe_id(m.tool_call_id)
            if archive_id in markers_in(m.content):
                continue  # snipped or collapsed already
            data = entries[i].data
            if data not in self._snipped:
                snipped = snip_text(m.content, archive_id)
                self._snipped[data] = None if snipped is None else tokens.count(snipped)
            after = self._snipped[data]
            if after is not None:
                found.append(SnipCandidate(index=i, tokens_after=after))
        return found

    def weigh(self, session: Compactable) -> SnipChoice | None:
        """The best snip of ``session``'s log now, paying or not."""
        entries = list(session.log)
        counts = self.counts(entries)
        candidates = self.candidates(entries, counts)
        current = {e.data for e in entries}
        self._snipped = {k: v for k, v in self._snipped.items() if k in current}  # what left the log is forgotten
        choice = choose_snip(counts, candidates, self.remaining(), self.prices())
        self.last_choice = choice
        self.weighed += choice is not None
        return choice

    def snip(self, session: Compactable, share: str) -> bool:
        choice = self.weigh(session)
        if choice is None or not choice.pays:
            return False
        chosen = set(choice.indices)
        new: list[Message | LogEntry] = []
        for i, entry in enumerate(session.log):
            m = entry.message
            if i in chosen and isinstance(m, ToolMessage):
                archive_id = safe_id(m.tool_call_id)
                self.archive.put(archive_id, m.content)
                new.append(ToolMessage(tool_call_id=m.tool_call_id, content=snip_text(m.content, archive_id) or ""))
            else:
                new.append(entry)
        self._rewrite(session, f"snip: {share}; {choice.describe()}", new)
        return True

    # ------------------------------------------------------------------------------------------------ force

    def force(self, session: Compactable, share: str) -> bool:
        """Collapse every tool result before the newest assistant message to a placeholder; False when none is left."""
        entries = list(session.log)
        last = max((i for i, e in enumerate(entries) if isinstance(e.message, AssistantMessage)), default=-1)
        labels = _call_labels([e.message for e in entries])
        new: list[Message | LogEntry] = []
        collapsed = 0
        for i, entry in enumerate(entries):
            m = entry.message
            if i < last and isinstance(m, ToolMessage):
                archive_id = safe_id(m.tool_call_id)
                short = placeholder_text(m.content, archive_id, labels.get(m.tool_call_id, m.tool_call_id))
                if len(short) < len(m.content):
                    self.archive.put(archive_id, m.content)
                    new.append(ToolMessage(tool_call_id=m.tool_call_id, content=short))
                    collapsed += 1
                    continue
            new.append(entry)
        if not collapsed:
            return False
        self._rewrite(session, f"force: {share}; {collapsed} tool results collapsed to placeholders", new)
        return True

    # ---------------------------------------------------------------------------------------------- compact

    def fold_index(self, epoch: int) -> Callable[[Sequence[Message]], str]:
        """The index builder of a compaction at ``epoch``: archives the folded tool results and transcript."""

        def index(older: Sequence[Message]) -> str:
            labels = _call_labels(older)
            lines: list[str] = []
            for m in older:
                if isinstance(m, ToolMessage):
                    archive_id = safe_id(m.tool_call_id)
                    self.archive.put(archive_id, m.content)
                    lines.append(f"- {labels.get(m.tool_call_id, m.tool_call_id)}: {recall_hint(archive_id)}")
            history = f"history-{epoch}"
            self.archive.put(history, render_transcript(older, whole=True))
            lines.append(f"- the folded part of this conversation, every message in full: {recall_hint(history)}")
            return "<archived>\n" + "\n".join(lines) + "\n</archived>\n"

        return index

    def _rewrite(self, session: Compactable, reason: str, new: Sequence[Message | LogEntry]) -> None:
        tokens_before, messages_before = session.context_tokens(), len(session.log)
        session.rewrite(new, reason)
        session.emit(
            Compacted(
                session=session.name,
                reason=reason,
                tokens_before=tokens_before,
                messages_before=messages_before,
                messages_after=len(session.log),
                digest_chars=0,
            )
        )


def ladder_for(
    registry: ToolRegistry,
    settings: TierSettings,
    ledger: Priced,
    expected: Callable[[], Callable[[], int] | None],
) -> Ladder | None:
    """The ladder of a session (None when its tiers are off). Its archive is the ``recall`` tool's (the registry
    must hold it: :func:`~sessions.tiers.recall.with_recall`); ``expected`` gives the harness's estimate of the
    remaining requests when it has one (else :func:`~sessions.tiers.policy.guess_remaining`)."""
    if not settings.tiers:
        return None
    recall = registry.get(RECALL_TOOL)
    if not isinstance(recall, RecallTool):
        raise ValueError("a session with tiers needs the recall tool in its registry (sessions.tiers.with_recall)")
    ratios = Ratios(
        window=settings.context_window,
        snip=settings.snip_ratio,
        compact=settings.compaction_ratio,
        force=settings.force_ratio,
        keep_tokens=int(settings.context_window * settings.compaction_keep_ratio),
    )

    def remaining() -> int:
        estimate = expected()
        return estimate() if estimate is not None else guess_remaining(ledger.requests)

    return Ladder(
        archive=recall.archive,
        ratios=ratios,
        prices=lambda: TokenPrices.of(ledger.price_book, settings.model, ledger.clock()),
        remaining=remaining,
    )


def _label(name: str, arguments: str) -> str:
    args = " ".join(arguments.split())
    return f"{name} {args[:160]}"


def _call_labels(messages: Sequence[Message]) -> dict[str, str]:
    return {
        c.id: _label(c.function.name, c.function.arguments)
        for m in messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    }


async def _sync(session: Compactable) -> None:
    if session.journal is not None:
        await session.journal.sync()
