"""Per-request expectations of a replay (issue 18): the model of request N, the cache growing request by request, at
most N requests, the event kinds a run must and must not emit, tool results matching a pattern.

:class:`RequestLog` is fed every event of the replay (over every run) and keeps what these checks need, in the order
it happened; :func:`request_failures` turns a scenario's expectations into readable failure messages.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scenarios import Expectations
from sessions import Compacted, ToolFinished, UsageReported


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One answered request, as its usage was reported."""

    session: str
    model: str
    prompt_tokens: int
    hit_tokens: int
    after_compaction: bool = False
    """The session was compacted since its previous request."""
    estimated: bool = False
    """The usage was estimated by the client (a stream cut at the marker never gets DeepSeek's usage)."""


@dataclass(frozen=True, slots=True)
class ToolResultSeen:
    session: str
    tool: str
    is_error: bool
    preview: str


@dataclass
class RequestLog:
    requests: list[RequestRecord] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    tools: list[ToolResultSeen] = field(default_factory=list)
    _compacted: set[str] = field(default_factory=set)

    def __call__(self, event: Any) -> None:
        kind = getattr(event, "kind", None)
        if isinstance(kind, str):
            self.kinds[kind] += 1
        if isinstance(event, UsageReported):
            after = event.session in self._compacted
            self._compacted.discard(event.session)
            usage = event.usage
            self.requests.append(
                RequestRecord(
                    event.session,
                    event.model,
                    usage.prompt_tokens,
                    usage.prompt_cache_hit_tokens,
                    after_compaction=after,
                    estimated=event.estimated,
                )
            )
        elif isinstance(event, Compacted):
            self._compacted.add(event.session)
        elif isinstance(event, ToolFinished):
            self.tools.append(ToolResultSeen(event.session, event.name, event.is_error, event.preview))

    def models(self) -> Counter[str]:
        """Requests per model id."""
        return Counter(r.model for r in self.requests)


def _model_matches(wanted: str, model: str) -> bool:
    return wanted == model or model.rsplit("-", 1)[-1] == wanted


def _nth(log: RequestLog, key: str) -> tuple[str, RequestRecord | None, int]:
    session, _, number = key.rpartition(":")
    n = int(number)
    pool = [r for r in log.requests if not session or r.session == session]
    label = f"{session} request {n}" if session else f"request {n}"
    return label, (pool[n - 1] if 0 < n <= len(pool) else None), len(pool)


def model_failures(wanted: dict[str, str], log: RequestLog) -> list[str]:
    failures = []
    for key, model in sorted(wanted.items()):
        label, record, count = _nth(log, key)
        if record is None:
            failures.append(f"{label}: expected on {model}, but only {count} were sent")
        elif not _model_matches(model, record.model):
            failures.append(f"{label}: expected on {model}, went to {record.model}")
    return failures


def growth_failures(rules: dict[str, tuple[str, ...]], log: RequestLog, cache_unit: int) -> list[str]:
    """Each request must hit at least the previous request (same session, same model) minus one cache unit. Requests
    with estimated usage (cut at the marker: DeepSeek's figures never arrived) are neither checked nor compared to."""
    failures = []
    for name, allowed in sorted(rules.items()):
        sessions = sorted({r.session for r in log.requests}) if name == "overall" else [name]
        for session in sessions:
            previous: dict[str, RequestRecord] = {}
            for n, record in enumerate((r for r in log.requests if r.session == session), start=1):
                if record.estimated:
                    continue
                before = previous.get(record.model)
                previous[record.model] = record
                if before is None or (record.after_compaction and "compaction" in allowed):
                    continue
                floor = before.prompt_tokens - cache_unit
                if record.hit_tokens < floor:
                    failures.append(
                        f"{session} request {n} ({record.model}) hit {record.hit_tokens} tokens, below the "
                        f"{before.prompt_tokens} its previous request sent minus one cache unit ({floor}): a byte "
                        "before the end of the log changed"
                        + (" (right after a compaction)" if record.after_compaction else "")
                    )
    return failures


def request_failures(expect: Expectations, log: RequestLog, *, cache_unit: int, text: str) -> list[str]:
    failures = model_failures(expect.request_models, log)
    failures += growth_failures(dict(expect.cache_growth), log, cache_unit)
    for session, most in sorted(expect.max_requests.items()):
        got = len(log.requests) if session == "overall" else sum(1 for r in log.requests if r.session == session)
        if got > most:
            failures.append(f"{session} requests: expected at most {most}, got {got}")
    for kind, least in sorted(expect.events.items()):
        if log.kinds[kind] < least:
            failures.append(f"event {kind}: expected at least {least}, got {log.kinds[kind]}")
    failures.extend(
        f"event {kind}: must not be emitted, got {log.kinds[kind]}" for kind in expect.no_events if log.kinds[kind]
    )
    for want in expect.tool_results:
        found = any(
            t.tool == want.tool
            and (want.session is None or t.session == want.session)
            and (want.is_error is None or t.is_error == want.is_error)
            and re.search(want.pattern, t.preview) is not None
            for t in log.tools
        )
        if not found:
            seen = [t.preview[:80] for t in log.tools if t.tool == want.tool][:3]
            failures.append(
                f"tool {want.tool}: no result matches /{want.pattern}/"
                + (f" (seen: {'; '.join(repr(s) for s in seen)})" if seen else " (the tool never ran)")
            )
    for session, least in sorted(expect.min_first_hit_tokens.items()):
        first = next((r for r in log.requests if r.session == session), None)
        if first is None:
            failures.append(f"{session} first request: expected to hit at least {least} tokens, but none was sent")
        elif first.hit_tokens < least:
            failures.append(
                f"{session} first request hit {first.hit_tokens} of {first.prompt_tokens} tokens, expected at least "
                f"{least}: the prefix an earlier run sent was not reused"
            )
    if expect.text_pattern is not None and re.search(expect.text_pattern, text) is None:
        failures.append(f"summary does not match /{expect.text_pattern}/: {text[:200]!r}")
    return failures
