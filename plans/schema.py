"""The plan document (DESIGN §5) as frozen pydantic models, and the planner tools' JSON schema made from them.

A minimal plan is an ``objective`` and steps with ``id``, ``title``, ``instructions`` (and usually ``depends_on``);
every other field has a default. Models are frozen and use tuples, so equal plans compare (and render) equal.

The fields the planner writes are the tool schema; the fields the supervisor owns (``status``, ``result``,
``evidence``, ``revision``) exist on the models but are left out of the schema: a planner never marks a step done.
"""

from __future__ import annotations

import json
from enum import StrEnum
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    BLOCKED = "blocked"
    SKIPPED = "skipped"


#: Statuses that let a dependent step start.
SATISFIED: frozenset[StepStatus] = frozenset({StepStatus.DONE, StepStatus.SKIPPED})

#: Fields owned by the supervisor: never in the planner's tool schema, never taken from a model-made plan.
RUNTIME_STEP_FIELDS: tuple[str, ...] = ("status", "result", "evidence")
RUNTIME_PLAN_FIELDS: tuple[str, ...] = ("revision",)

StepId = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


class VerifyCommand(_Frozen):
    """A shell command the supervisor runs to check a step; it passes when it exits with ``expect_exit``."""

    command: str = Field(min_length=1)
    expect_exit: int = 0
    timeout_s: float | None = Field(default=None, gt=0, description="seconds")


class Step(_Frozen):
    id: StepId
    title: str = Field(min_length=1)
    instructions: str = Field(min_length=1)
    depends_on: tuple[StepId, ...] = Field(default=(), description="ids of steps that must finish first")
    reads: tuple[str, ...] = Field(default=(), description="paths or globs")
    writes: tuple[str, ...] = Field(default=(), description="paths or globs")
    acceptance: tuple[str, ...] = Field(default=(), description="criteria")
    verify: tuple[VerifyCommand, ...] = Field(default=(), description="shell commands that must pass")
    risk: Risk = Risk.LOW
    needs_pro: bool = Field(default=False, description="hint: needs the stronger model")
    status: StepStatus = StepStatus.PENDING
    result: str = ""
    evidence: tuple[str, ...] = ()


class Plan(_Frozen):
    objective: str = Field(min_length=1)
    assumptions: tuple[str, ...] = ()
    non_goals: tuple[str, ...] = ()
    steps: tuple[Step, ...]
    requires_approval: bool = Field(default=False, description="ask the user before executing")
    revision: int = Field(default=1, ge=1)

    def step(self, step_id: str) -> Step:
        """The step with this id (the first, if the plan holds duplicates). Raises ``KeyError`` if there is none."""
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(step.id for step in self.steps)

    def with_statuses(self, statuses: dict[str, StepStatus]) -> Plan:
        """A copy with the given steps' statuses replaced."""
        steps = tuple(s.model_copy(update={"status": statuses[s.id]}) if s.id in statuses else s for s in self.steps)
        return self.model_copy(update={"steps": steps})


# ------------------------------------------------------------------------------------------------ tool schema

#: Names of the planner tools whose parameters are :func:`plan_tool_schema`.
SUBMIT_PLAN = "submit_plan"
REVISE_PLAN = "revise_plan"


def _lean(node: Any, *, in_properties: bool = False) -> Any:
    """Drop titles, defaults, additionalProperties and class docstrings: bytes the model does not need."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if not in_properties and key in ("title", "default", "additionalProperties"):
                continue
            if not in_properties and key == "description" and "properties" in node:
                continue  # a class docstring: for readers of this code, not for the model
            out[key] = _lean(value, in_properties=(key == "properties" and not in_properties))
        return out
    if isinstance(node, list):
        return [_lean(item) for item in node]
    return node


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **rest}, defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def _nullable_to_plain(node: Any) -> Any:
    """``anyOf: [{type: number}, {type: null}]`` → ``{type: number}``: an omitted optional field says the same."""
    if isinstance(node, dict):
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
            (kept,) = [option for option in any_of if option != {"type": "null"}]
            merged = {k: v for k, v in node.items() if k != "anyOf"}
            merged.update(kept)
            return _nullable_to_plain(merged)
        return {k: _nullable_to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_nullable_to_plain(item) for item in node]
    return node


def _drop_runtime_fields(schema: dict[str, Any]) -> dict[str, Any]:
    props = dict(schema["properties"])
    for name in RUNTIME_PLAN_FIELDS:
        props.pop(name, None)
    step = dict(props["steps"]["items"])
    step_props = {k: v for k, v in step["properties"].items() if k not in RUNTIME_STEP_FIELDS}
    step["properties"] = step_props
    props["steps"] = {**props["steps"], "items": step}
    return {**schema, "properties": props}


def canonical_bytes(value: Any) -> bytes:
    """Compact JSON with sorted keys, UTF-8: equal values give equal bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


@cache
def plan_tool_schema_bytes() -> bytes:
    """The canonical bytes of :func:`plan_tool_schema`: identical from run to run (it goes into every prefix)."""
    raw = Plan.model_json_schema(mode="validation")
    schema = _nullable_to_plain(_lean(_inline(raw, raw.get("$defs", {}))))
    return canonical_bytes(_drop_runtime_fields(schema))


def plan_tool_schema() -> dict[str, Any]:
    """The JSON schema of the ``submit_plan`` / ``revise_plan`` parameters: a plan without supervisor-owned fields.

    A fresh dict every call (mutating it cannot affect the cached bytes).
    """
    result: dict[str, Any] = json.loads(plan_tool_schema_bytes())
    return result


def plan_tool_definitions() -> list[dict[str, Any]]:
    """OpenAI-style function definitions for the two planner tools, in a fixed order."""
    return [
        {
            "type": "function",
            "function": {
                "name": SUBMIT_PLAN,
                "description": "Submit the plan: steps form a DAG via depends_on.",
                "parameters": plan_tool_schema(),
            },
        },
        {
            "type": "function",
            "function": {
                "name": REVISE_PLAN,
                "description": "Replace the unfinished steps. Repeat done steps unchanged; keep ids meaning the same.",
                "parameters": plan_tool_schema(),
            },
        },
    ]
