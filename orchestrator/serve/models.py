"""The API's request and response bodies (pydantic). ``GET /api/schema`` is their JSON Schema; ``docs/serve-api.md``
describes them. Requests forbid unknown fields, so a misspelt option is a 400, not silently ignored."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunState = Literal[
    "planning",
    "awaiting_review",
    "executing",
    "replanning",
    "judging",
    "complete",
    "blocked",
    "paused",
    "failed",
    "cancelled",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Budgets(_Request):
    budget_usd: float | None = Field(default=None, gt=0)
    max_requests: int | None = Field(default=None, ge=1)
    max_minutes: float | None = Field(default=None, gt=0)


class GoalRequest(Budgets):
    """``POST /api/goals``: a new goal in ``workspace``."""

    workspace: str = Field(min_length=1)
    objective: str = Field(min_length=1)
    preset: Literal["flash", "auto", "pro"] | None = None
    review: bool = True
    """True: the plan waits for ``POST /api/runs/{id}/review``; False: it is approved automatically."""


class ResumeRequest(Budgets):
    """``POST /api/runs/{id}/resume``: the limits given again replace the run's ones (the others are kept)."""


class ReviewRequest(_Request):
    """``POST /api/runs/{id}/review``. ``feedback`` goes with ``revise``; ``plan`` (a plan document) with ``edit``."""

    decision: Literal["approve", "revise", "edit", "cancel"]
    feedback: str = ""
    plan: dict[str, Any] | None = None


class UndoRequest(_Request):
    """``POST /api/runs/{id}/undo``: take back the run's steps from ``step`` on (default: its last step)."""

    step: str | None = None


class GoalCreated(BaseModel):
    run_id: str
    workspace: str
    url: str
    """The run's API path (``/api/runs/{run_id}``)."""


class Ok(BaseModel):
    ok: bool = True


class UndoResult(Ok):
    restored: list[str] = []
    kept: list[str] = []
    """Files changed after the agent left them (by hand): kept as they are, never overwritten."""


class ErrorResponse(BaseModel):
    error: str
    hint: str


class RunInfo(BaseModel):
    """One run, as ``GET /api/runs`` lists it."""

    run_id: str
    workspace: str
    objective: str
    state: str
    reason: str
    created_at: str
    updated_at: str
    cost_usd: float
    requests: int
    cache_hit_ratio: float | None
    duration_s: float
    steps_total: int | None
    steps_done: int | None
    live: bool
    """True while the service runs it (planning, awaiting review, executing …)."""
    error: str | None = None
    """What stopped it from outside (a DeepSeek API error), when something did."""


class RunList(BaseModel):
    runs: list[RunInfo]
    workspaces: list[str] = []
    """The workspaces the service knows (``reasonix serve --workspace`` and those goals were started in): the page
    offers them for a new goal."""


class RunDetail(RunInfo):
    """``GET /api/runs/{id}``."""

    plan: dict[str, Any] | None
    """The current plan document, each step with its status."""
    summary: dict[str, Any] | None
    """The summary object ``reasonix goal --json`` ends with; ``None`` while the run is live."""
    awaiting_review: bool
    resume_hint: str


SERVICE_EVENT_KINDS: tuple[str, ...] = ("summary", "error")
"""The events the service itself appends to a run's stream, last: the run's summary, or the error that stopped it."""


class EventKinds(BaseModel):
    """``GET /api/event-kinds``: every ``kind`` (the SSE event name) a run's stream may carry, from the event models:
    a client listening by name (the dashboard) subscribes to these rather than to a list of its own."""

    goal: list[str]
    session: list[str]
    service: list[str]


SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    GoalRequest,
    ResumeRequest,
    ReviewRequest,
    UndoRequest,
    GoalCreated,
    Ok,
    UndoResult,
    ErrorResponse,
    RunInfo,
    RunList,
    RunDetail,
    EventKinds,
)


def api_schema() -> dict[str, Any]:
    """The JSON Schema of every request and response body, by model name."""
    return {"models": {m.__name__: m.model_json_schema() for m in SCHEMA_MODELS}}
