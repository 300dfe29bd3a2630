"""The last line of ``reasonix run``, ``goal``, ``plan``, ``exec`` and ``replay``: one :class:`Summary` shape for all.

``--json`` prints ``Summary.model_dump(mode="json")``; the terminal renders the same model
(:func:`orchestrator.ui.goal_view.summary_text` for a goal). The figures are summed over every request, as the server
reported them. ``schema_version`` goes up when a field is renamed or removed (adding an optional field does not).
Fields that do not apply to a command are ``None`` (or empty), so every summary has every key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from sessions.wire import Usage

SCHEMA_VERSION = 1
Command = Literal["run", "goal", "plan", "exec", "replay"]


def ratio(hit: int, prompt: int) -> float | None:
    """Cache-hit tokens ÷ prompt tokens; ``None`` when nothing was sent."""
    return hit / prompt if prompt else None


class SessionFigures(BaseModel):
    """What one session (``planner``, ``executor``) sent and cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    requests: int
    prompt_tokens: int
    prompt_cache_hit_tokens: int
    prompt_cache_miss_tokens: int
    completion_tokens: int
    cost_usd: float
    cache_hit_ratio: float | None
    cache_hit_ratio_after_first: float | None = None
    """The same, leaving out the session's first request (which can hit nothing of this run): replay only."""
    efficiency: float | None = None
    """Hits ÷ what a perfect cache could have hit (the emulator's count): replay only."""

    @classmethod
    def of(cls, *, requests: int, usage: Usage, cost_usd: float) -> SessionFigures:
        return cls(
            requests=requests,
            prompt_tokens=usage.prompt_tokens,
            prompt_cache_hit_tokens=usage.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens=usage.prompt_cache_miss_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=cost_usd,
            cache_hit_ratio=ratio(usage.prompt_cache_hit_tokens, usage.prompt_tokens),
        )


class ReplayDetails(BaseModel):
    """What only a replay reports: the scenario and what it checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    scenario: str
    title: str
    origin: str
    command: str
    """The scenario's command (``run``, ``goal``, ``plan``)."""
    review: str
    compactions: int = 0
    faults: dict[str, int] = {}
    repairs: dict[str, int] = {}
    failures: tuple[str, ...] = ()
    drift: tuple[str, ...] = ()
    workspace: str | None = None


class Summary(BaseModel):
    """The summary object that ends every command's ``--json`` output."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["summary"] = "summary"
    schema_version: int = SCHEMA_VERSION
    command: Command
    run_id: str | None = None
    status: str
    """``run``: the turn's status (``done``, ``request_limit``, ``error``, ``cancelled`` …); a goal: its end state;
    ``replay``: the status of the replayed command."""
    ok: bool
    text: str = ""
    error: str | None = None
    requests: int
    prompt_tokens: int
    prompt_cache_hit_tokens: int
    prompt_cache_miss_tokens: int
    completion_tokens: int
    cost_usd: float
    cache_hit_ratio: float | None
    sessions: dict[str, SessionFigures] = {}
    steps_done: int | None = None
    steps_total: int | None = None
    escalations: int = 0
    replans: int = 0
    model: str | None = None
    """``run``: the model of its executor session."""
    journal: str | None = None
    """``run``: the session journal."""
    resume_command: str | None = None
    plan_file: str | None = None
    exec_command: str | None = None
    replay: ReplayDetails | None = None


def figures(sessions: Mapping[str, tuple[int, Usage, float]]) -> dict[str, Any]:
    """The figures of a :class:`Summary` (per session and summed) from each session's requests, usage and cost, as
    keyword arguments."""
    total = Usage()
    for _, usage, _ in sessions.values():
        total = total + usage
    requests = sum(r for r, _, _ in sessions.values())
    cost = sum(c for _, _, c in sessions.values())
    whole = SessionFigures.of(requests=requests, usage=total, cost_usd=cost)
    return {
        **whole.model_dump(exclude={"cache_hit_ratio_after_first", "efficiency"}),
        "sessions": {name: SessionFigures.of(requests=r, usage=u, cost_usd=c) for name, (r, u, c) in sessions.items()},
    }


RunStatus = Literal["done", "request_limit", "storm", "empty", "length", "content_filter", "error", "cancelled"]

WHAT_TO_DO: dict[str, str] = {
    "request_limit": "the task used every request it was allowed; run it again with a higher --max-requests, "
    "or split it into smaller tasks",
    "storm": "the model repeated the same tool call until the turn was ended; rephrase the task",
    "empty": "the model finished without an answer and without a tool call; run the task again",
    "length": "the reply was cut at the output limit (finish_reason length) before it was complete; ask for a "
    "smaller piece of work (one file or one function at a time)",
    "content_filter": "DeepSeek's content filter stopped the reply; rephrase the task",
}


class TaskSummary(Summary):
    """The last line of ``reasonix run --json``: a :class:`Summary`, with the advice for a run that did not finish."""

    def advice(self) -> str | None:
        """What the user should do about a run that did not finish, or None when it did."""
        if self.status == "done":
            return None
        if self.status == "error":
            return self.error
        if self.status == "cancelled":
            again = f"reasonix -p 'go on' --resume {self.run_id}" if self.run_id else "reasonix -p --resume RUN_ID"
            return f"interrupted; the run is journaled in {self.journal}; continue it with `{again}`"
        advice = WHAT_TO_DO.get(self.status, f"the turn ended with status {self.status}")
        if self.status in ("storm", "empty") and "pro" not in (self.model or ""):
            advice += ", or try --model pro"
        return advice
