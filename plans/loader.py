"""Reading a plan file: the one loader behind ``reasonix exec``, ``reasonix plans`` and a run's stored revisions.

Every way a file can fail to be a plan raises one error, :class:`PlanFileError`, naming the file and each problem:
it cannot be opened, it is larger than :data:`plans.limits.MAX_PLAN_BYTES`, it is not UTF-8, not JSON, nested too
deeply, not a plan document (each schema error by step), more than :data:`plans.limits.MAX_PLAN_STEPS` steps, or,
when asked for, an invalid graph (a cycle, an unknown dependency, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import PlanFileError, PlanReadError, PlanValidationError
from .lenient import explain_validation_error, read_plan
from .limits import MAX_PLAN_BYTES, MAX_PLAN_STEPS, too_many_steps
from .schema import Plan

TOO_DEEP = "its JSON is nested too deeply (a plan is an object with a list of steps)"


@dataclass(frozen=True, slots=True)
class LoadedPlan:
    """A plan read from a file, and what was normalized to read it (only with ``lenient``)."""

    plan: Plan
    notes: tuple[str, ...] = ()


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PLAN_BYTES + 1)
    except OSError as exc:
        raise PlanFileError(path, f"cannot read plan file {path}: {exc.strerror or exc}", unreadable=True) from None
    if len(data) > MAX_PLAN_BYTES:
        raise PlanFileError.invalid(path, f"it is over {MAX_PLAN_BYTES:,} bytes, the largest plan file read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanFileError.invalid(
            path, f"it is not UTF-8 text (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); save it as UTF-8"
        ) from None


def _decode_json(path: object, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanFileError.invalid(path, f"not JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise PlanFileError.invalid(path, TOO_DEEP) from None


def parse_plan_text(text: str, path: object, *, lenient: bool = False) -> LoadedPlan:
    """A plan from a file's text (``path`` names it in errors). See :func:`load_plan_file`."""
    if lenient:
        try:
            result = read_plan(text)
        except PlanReadError as exc:
            raise PlanFileError.invalid(path, *exc.problems) from None
        return LoadedPlan(result.plan, result.notes)
    data = _decode_json(path, text)
    steps = data.get("steps") if isinstance(data, dict) else None
    if isinstance(steps, list) and len(steps) > MAX_PLAN_STEPS:
        raise PlanFileError.invalid(path, too_many_steps(len(steps)))
    try:
        return LoadedPlan(Plan.model_validate(data))
    except ValidationError as exc:
        raise PlanFileError.invalid(path, *explain_validation_error(exc, data)) from None
    except RecursionError:
        raise PlanFileError.invalid(path, TOO_DEEP) from None


def load_plan_file(path: Path, *, lenient: bool = False, check_graph: bool = False) -> LoadedPlan:
    """Read the plan in ``path``: strictly, or ``lenient`` as the supervisor reads a model's plan.

    With ``check_graph`` the plan must also be a valid DAG. Raises :class:`PlanFileError` naming every problem.
    """
    loaded = parse_plan_text(_read_text(path), path, lenient=lenient)
    if check_graph:
        from .graph import find_issues  # networkx, only for the graph check: storing a plan file does not need it

        issues = find_issues(loaded.plan)
        if issues:
            raise PlanFileError(
                path, str(PlanValidationError(issues, headline=f"{path} is not a valid plan")), graph=True
            )
    return loaded
