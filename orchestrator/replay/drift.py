"""Prompt drift: each live request of a replay that differs from the recorded one (same session, same position),
as a unified diff of canonical forms, after what may legitimately differ between runs is blanked
(:mod:`orchestrator.replay.volatile`)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from orchestrator.replay.recorder import CapturedExchange, session_names
from orchestrator.replay.volatile import steady_request
from scenarios import RecordedExchange

DRIFT_DIFF_LINES = 60


def canonical_lines(value: Any, path: str = "") -> list[str]:
    """A request as sorted ``path = value`` lines; multi-line strings one line each, so a diff shows what changed."""
    if isinstance(value, dict):
        return [line for key in sorted(value) for line in canonical_lines(value[key], f"{path}.{key}" if path else key)]
    if isinstance(value, list):
        if not value:
            return [f"{path} = []"]
        return [line for i, item in enumerate(value) for line in canonical_lines(item, f"{path}[{i}]")]
    if isinstance(value, str) and "\n" in value:
        return [f"{path} = |", *(f"  {line}" for line in value.split("\n"))]
    return [f"{path} = {json.dumps(value, ensure_ascii=False, sort_keys=True)}"]


def _delivered(items: Iterable[tuple[str, dict[str, Any], bool]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for session, request, ok in items:
        if ok:
            out.setdefault(session, []).append(request)
    return out


def prompt_drift(
    recorded: Sequence[RecordedExchange], live: Sequence[CapturedExchange], *, limit: int = 3
) -> list[str]:
    """Each live request that differs from the recorded one (same session, same position), as a unified diff of the
    canonical forms. Only requests that got a whole reply are compared (retries repeat a request); what may differ
    between runs of the same command inside tool output is blanked first (:mod:`orchestrator.replay.volatile`)."""
    rec = _delivered(
        (r.session, r.request, int(r.reply.get("status", 0)) == 200 and bool(r.reply.get("complete"))) for r in recorded
    )
    now = _delivered(
        (name, ex.request_json(), ex.status == 200 and ex.complete)
        for name, ex in zip(session_names(live), live, strict=True)
    )
    out: list[str] = []
    for session in sorted(set(rec) | set(now)):
        a, b = rec.get(session, []), now.get(session, [])
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                out.append(f"{session}: the recording has {len(a)} requests, the replay sent {len(b)}")
                break
            was, sent = steady_request(a[i]), steady_request(b[i])  # timings, pids … in tool output may differ
            if was == sent:
                continue
            diff = list(
                difflib.unified_diff(
                    canonical_lines(was),
                    canonical_lines(sent),
                    f"recorded/{session}/request-{i + 1}",
                    f"replayed/{session}/request-{i + 1}",
                    lineterm="",
                    n=1,
                )
            )
            if len(diff) > DRIFT_DIFF_LINES:
                diff = [*diff[:DRIFT_DIFF_LINES], f"... ({len(diff) - DRIFT_DIFF_LINES} more diff lines)"]
            out.append(f"{session} request {i + 1} drifted from the recording:\n" + "\n".join(diff))
            if len(out) >= limit:
                return out
    return out
