"""Reading plans that a model made: accept the common slips, say what was normalized, reject the rest clearly.

Accepted and recorded in ``notes``: malformed JSON that ``json_repair`` can mend, a bare list of steps, a ``{"plan":
...}`` wrapper, a mapping of id → step, camelCase or aliased keys (``dependencies``/``deps``/``after`` for
``depends_on``, ``description`` for ``instructions``, ``goal`` for ``objective`` ...), integer ids, a single string
where a list belongs, verify commands given as strings, risk in any letter case, ``"yes"``/``"no"`` booleans, a
missing title or instructions when the other is there, missing ids when no step has one (``S1``, ``S2`` ...).

Never taken from a model: ``status``, ``result``, ``evidence`` and ``revision`` (the supervisor owns them); they are
dropped with a note. What cannot be understood raises :class:`PlanReadError`, whose message is written for the model.
Graph problems (cycles, unknown ids) are not this module's business: run :func:`plans.graph.find_issues` next.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import json_repair
from pydantic import ValidationError

from .errors import PlanReadError
from .limits import MAX_PLAN_STEPS, too_many_steps
from .schema import RUNTIME_PLAN_FIELDS, RUNTIME_STEP_FIELDS, Plan, Risk

_PLAN_KEYS: dict[str, str] = {
    "objective": "objective",
    "goal": "objective",
    "assumptions": "assumptions",
    "non_goals": "non_goals",
    "nongoals": "non_goals",
    "out_of_scope": "non_goals",
    "steps": "steps",
    "tasks": "steps",
    "requires_approval": "requires_approval",
    "needs_approval": "requires_approval",
    "revision": "revision",
}
_STEP_KEYS: dict[str, str] = {
    "id": "id",
    "step_id": "id",
    "step": "id",
    "title": "title",
    "name": "title",
    "summary": "title",
    "instructions": "instructions",
    "instruction": "instructions",
    "description": "instructions",
    "details": "instructions",
    "task": "instructions",
    "depends_on": "depends_on",
    "dependencies": "depends_on",
    "deps": "depends_on",
    "depends": "depends_on",
    "after": "depends_on",
    "requires": "depends_on",
    "prerequisites": "depends_on",
    "reads": "reads",
    "read": "reads",
    "inputs": "reads",
    "writes": "writes",
    "write": "writes",
    "outputs": "writes",
    "acceptance": "acceptance",
    "acceptance_criteria": "acceptance",
    "criteria": "acceptance",
    "verify": "verify",
    "verification": "verify",
    "verify_commands": "verify",
    "checks": "verify",
    "risk": "risk",
    "risk_level": "risk",
    "needs_pro": "needs_pro",
    "status": "status",
    "result": "result",
    "evidence": "evidence",
}
_VERIFY_KEYS: dict[str, str] = {
    "command": "command",
    "cmd": "command",
    "run": "command",
    "shell": "command",
    "expect_exit": "expect_exit",
    "expected_exit": "expect_exit",
    "exit_code": "expect_exit",
    "expected_exit_code": "expect_exit",
    "timeout_s": "timeout_s",
    "timeout": "timeout_s",
    "timeout_seconds": "timeout_s",
}
_RISKS: dict[str, Risk] = {
    "low": Risk.LOW,
    "minor": Risk.LOW,
    "medium": Risk.MEDIUM,
    "med": Risk.MEDIUM,
    "moderate": Risk.MEDIUM,
    "high": Risk.HIGH,
    "critical": Risk.HIGH,
}
#: Values of supervisor-owned fields that say nothing (dropping them is not worth a note).
_RUNTIME_DEFAULTS: tuple[Any, ...] = ("pending", "", [], None, 1)
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0", ""}


@dataclass(frozen=True, slots=True)
class LenientPlan:
    """A plan read from model output, and what had to be normalized to read it (empty when nothing)."""

    plan: Plan
    notes: tuple[str, ...]


def _snake(key: str) -> str:
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key.strip())
    return re.sub(r"[\s\-]+", "_", key).lower()


class _Reader:
    def __init__(self) -> None:
        self._notes: dict[str, list[str]] = {}
        self.problems: list[str] = []

    def note(self, what: str, where: str = "") -> None:
        places = self._notes.setdefault(what, [])
        if where and where not in places:
            places.append(where)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(f"{what} ({', '.join(where)})" if where else what for what, where in self._notes.items())

    # -- values

    def string_list(self, value: Any, field: str, where: str) -> list[str] | None:
        if value is None:
            return []
        if isinstance(value, str):
            self.note(f"read a single string as the list '{field}'", where)
            return [value]
        if isinstance(value, list):
            out: list[str] = []
            for item in value:
                if isinstance(item, str):
                    out.append(item)
                elif isinstance(item, int | float) and not isinstance(item, bool):
                    self.note(f"read numbers in '{field}' as text", where)
                    out.append(str(item))
                else:
                    self.problems.append(f"{where}: '{field}' must be a list of strings, got {json.dumps(item)}")
                    return None
            return out
        self.problems.append(f"{where}: '{field}' must be a list of strings, got {type(value).__name__}")
        return None

    def step_id(self, value: Any, where: str) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):
            self.note("read integer step ids as strings")
            return str(value)
        if isinstance(value, str):
            return value.strip()
        if isinstance(value, dict) and "id" in value:
            self.note("read dependency objects as their 'id'", where)
            return self.step_id(value["id"], where)
        self.problems.append(f'{where}: a step id must be a short string like "S1", got {json.dumps(value)}')
        return None

    def dependencies(self, value: Any, where: str) -> list[str] | None:
        if value is None:
            return []
        if isinstance(value, str):
            parts = [p for p in re.split(r"[,\s]+", value) if p]
            self.note("read a string as the list 'depends_on'", where)
            value = parts
        elif not isinstance(value, list):
            value = [value]
            self.note("read a single id as the list 'depends_on'", where)
        ids = [self.step_id(item, where) for item in value]
        return None if any(i is None for i in ids) else [i for i in ids if i is not None]

    def boolean(self, value: Any, field: str, where: str) -> bool | None:
        if isinstance(value, bool):
            return value
        if value is None:
            return False
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            self.note(f"read {json.dumps(value)} as a boolean for '{field}'", where)
            return text in _TRUE
        self.problems.append(f"{where}: '{field}' must be true or false, got {json.dumps(value)}")
        return None

    def risk(self, value: Any, where: str) -> str | None:
        if value is None:
            return Risk.LOW.value
        text = str(value).strip().lower()
        if text in _RISKS:
            if text != value:
                self.note("read risk levels case-insensitively", where)
            return _RISKS[text].value
        self.problems.append(f"{where}: 'risk' must be one of low, medium, high; got {json.dumps(value)}")
        return None

    def verify(self, value: Any, where: str) -> list[dict[str, Any]] | None:
        if value is None:
            return []
        if not isinstance(value, list):
            value = [value]
        out: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, str):
                self.note("read verify commands given as strings", where)
                out.append({"command": item})
            elif isinstance(item, dict):
                command = self.keys(item, _VERIFY_KEYS, f"{where} verify")
                out.append(command)
            else:
                self.problems.append(
                    f"{where}: each 'verify' entry must be a shell command string or "
                    f'{{"command": ..., "expect_exit": 0, "timeout_s": 60}}, got {json.dumps(item)}'
                )
                return None
        return out

    # -- objects

    def keys(self, raw: dict[str, Any], table: dict[str, str], where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in raw.items():
            name = table.get(_snake(str(key)))
            if name is None:
                self.note(f"ignored unknown field '{key}'", where)
                continue
            if name in out:
                self.note(f"ignored '{key}' because '{name}' was already given", where)
                continue
            if key != name:
                self.note(f"read '{key}' as '{name}'", where)
            out[name] = value
        return out

    def step(self, raw: Any, position: int) -> dict[str, Any] | None:
        where = f"step {position}"
        if isinstance(raw, str):
            self.note("read a bare string as a step's title and instructions", where)
            raw = {"title": raw.split("\n", 1)[0][:80], "instructions": raw}
        if not isinstance(raw, dict):
            self.problems.append(
                f"{where}: a step must be an object with id, title, instructions, depends_on; got {json.dumps(raw)}"
            )
            return None
        hint = next((v for k, v in raw.items() if _STEP_KEYS.get(_snake(str(k))) == "id"), None)
        if isinstance(hint, str | int) and not isinstance(hint, bool) and str(hint).strip():
            where = f"step {str(hint).strip()}"
        step = self.keys(raw, _STEP_KEYS, where)
        if "id" in step:
            step["id"] = self.step_id(step["id"], where)
        for name in RUNTIME_STEP_FIELDS:
            if name in step and step.pop(name) not in _RUNTIME_DEFAULTS:
                self.note(f"dropped '{name}': the supervisor sets it, not the plan", where)
        title, instructions = step.get("title"), step.get("instructions")
        if not title and isinstance(instructions, str) and instructions.strip():
            step["title"] = instructions.strip().split("\n", 1)[0][:80]
            self.note("used the first line of the instructions as the missing title", where)
        elif not instructions and isinstance(title, str) and title.strip():
            step["instructions"] = title
            self.note("used the title as the missing instructions", where)
        elif not title and not instructions:
            self.problems.append(f"{where}: give the step a 'title' and 'instructions' (what to do, concretely)")
        converters: dict[str, Callable[[Any], Any]] = {
            "depends_on": lambda v: self.dependencies(v, where),
            "verify": lambda v: self.verify(v, where),
            "risk": lambda v: self.risk(v, where),
            "needs_pro": lambda v: self.boolean(v, "needs_pro", where),
        }
        for list_field in ("reads", "writes", "acceptance"):
            converters[list_field] = functools.partial(self.string_list, field=list_field, where=where)
        for name, convert in converters.items():
            if name in step:
                step[name] = convert(step[name])
        return step

    def plan(self, data: Any, objective: str | None) -> dict[str, Any] | None:
        if isinstance(data, dict) and len(data) == 1 and _snake(str(next(iter(data)))) == "plan":
            self.note("unwrapped the outer 'plan' object")
            data = next(iter(data.values()))
        if isinstance(data, list):
            self.note("read a bare list as the plan's steps")
            data = {"steps": data}
        if not isinstance(data, dict):
            self.problems.append(
                'the plan must be a JSON object like {"objective": ..., "steps": [...]}, got ' + type(data).__name__
            )
            return None
        plan = self.keys(data, _PLAN_KEYS, "plan")
        for name in RUNTIME_PLAN_FIELDS:
            if name in plan and plan.pop(name) not in _RUNTIME_DEFAULTS:
                self.note(f"dropped '{name}': the supervisor sets it, not the plan")
        if not plan.get("objective"):
            if objective:
                plan["objective"] = objective
                self.note("took the objective from the goal")
            else:
                self.problems.append("the plan has no 'objective': say in one sentence what the plan achieves")
        for name in ("assumptions", "non_goals"):
            if name in plan:
                plan[name] = self.string_list(plan[name], name, "plan")
        if "requires_approval" in plan:
            plan["requires_approval"] = self.boolean(plan["requires_approval"], "requires_approval", "plan")
        steps = plan.get("steps")
        if isinstance(steps, dict):
            self.note("read an object of id → step as the list of steps")
            steps = [{"id": key, **value} if isinstance(value, dict) else value for key, value in steps.items()]
        if not isinstance(steps, list):
            self.problems.append("the plan needs 'steps': a list of objects with id, title, instructions, depends_on")
            return None
        read = [self.step(raw, i) for i, raw in enumerate(steps, 1)]
        plan["steps"] = [s for s in read if s is not None]
        self._assign_ids(plan["steps"])
        return plan

    def _assign_ids(self, steps: list[dict[str, Any]]) -> None:
        missing = [i for i, step in enumerate(steps, 1) if not step.get("id")]
        if not missing:
            return
        if len(missing) == len(steps):
            for i, step in enumerate(steps, 1):
                step["id"] = f"S{i}"
            self.note("numbered the steps S1, S2, ... because none had an id")
            return
        listed = ", ".join(str(i) for i in missing)
        self.problems.append(f"step {listed}: every step needs an 'id' (short and unique, like \"S3\")")


def explain_validation_error(exc: ValidationError, data: Any) -> list[str]:
    """One line per schema error, naming the step by position and id: for a model, or a person, to fix."""
    raw = data if isinstance(data, dict) else {}
    return [_describe(dict(e), raw) for e in exc.errors()]


def _describe(error: dict[str, Any], data: dict[str, Any]) -> str:
    loc = list(error["loc"])
    where = "plan"
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        position = loc[1]
        steps = data.get("steps", [])
        step = steps[position] if isinstance(steps, list) and position < len(steps) else None
        sid = step.get("id") if isinstance(step, dict) else None
        where = f"step {sid}" if isinstance(sid, str | int) and str(sid) else f"step {position + 1}"
        loc = loc[2:]
    field = ".".join(str(part) for part in loc)
    return f"{where}: '{field}' {error['msg'][0].lower()}{error['msg'][1:]}" if field else f"{where}: {error['msg']}"


def _decode(data: object, reader: _Reader) -> Any:
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if not isinstance(data, str):
        return data
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        repaired = json_repair.loads(data)
        if isinstance(repaired, dict | list) and repaired:
            reader.note("repaired malformed JSON")
            return repaired
        raise PlanReadError(["the plan is not JSON; send it as the tool's JSON arguments"]) from None


def read_plan(data: object, *, objective: str | None = None) -> LenientPlan:
    """Read a model-made plan (a JSON string or the decoded value) into a :class:`Plan`.

    ``objective`` fills in a plan that leaves its objective out (the goal the planner was given).
    Raises :class:`PlanReadError` listing every problem, phrased for the model to fix in its next turn.
    """
    reader = _Reader()
    try:
        raw = reader.plan(_decode(data, reader), objective)
    except RecursionError:
        raise PlanReadError(
            ["the plan is nested too deeply to read; a plan is an object with a list of steps"]
        ) from None
    if reader.problems or raw is None:
        raise PlanReadError(reader.problems)
    steps = raw.get("steps") if isinstance(raw, dict) else None
    if isinstance(steps, list) and len(steps) > MAX_PLAN_STEPS:
        raise PlanReadError([too_many_steps(len(steps))])
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        raise PlanReadError(explain_validation_error(exc, raw)) from None
    return LenientPlan(plan=plan, notes=reader.notes)
