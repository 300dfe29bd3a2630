"""Revisions of a plan, and diffs between two plans.

A revision replaces the unfinished part of a plan. Done steps are history: the proposed plan must repeat each of them
with the same planner-written fields (it may not drop or change one), and the revised plan keeps the done step exactly
as it was, status, result and evidence included. An id keeps its meaning: a proposed step with an existing id *is* that
step (changed, perhaps), never a new one. The objective is the user's and is kept; the revision number goes up by one.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import IssueCode, PlanIssue, PlanRevisionError, PlanValidationError
from .graph import find_issues
from .render import verify_text
from .schema import RUNTIME_STEP_FIELDS, Plan, Step, StepStatus, VerifyCommand

#: The step fields a planner writes (and may change on a step that is not done).
PLANNER_STEP_FIELDS: tuple[str, ...] = tuple(name for name in Step.model_fields if name not in RUNTIME_STEP_FIELDS)
#: Plan-level fields a diff compares, in display order.
PLAN_DIFF_FIELDS: tuple[str, ...] = ("revision", "objective", "assumptions", "non_goals", "requires_approval")


def _first_by_id(plan: Plan) -> dict[str, Step]:
    by_id: dict[str, Step] = {}
    for step in plan.steps:
        by_id.setdefault(step.id, step)
    return by_id


def revise(current: Plan, proposed: Plan) -> Plan:
    """The next revision of ``current``: ``proposed``'s steps, with every done step kept exactly as it was.

    Raises :class:`PlanRevisionError` if a done step is dropped or changed (alongside any graph issues), or
    :class:`PlanValidationError` if the revised plan is otherwise invalid.
    """
    proposed_by_id = _first_by_id(proposed)
    done = {s.id: s for s in current.steps if s.status is StepStatus.DONE}
    history: list[PlanIssue] = []
    for sid, old in done.items():
        new = proposed_by_id.get(sid)
        if new is None:
            history.append(
                PlanIssue(
                    IssueCode.DONE_STEP_DROPPED,
                    f"step {sid} is done and cannot be dropped; repeat it unchanged in the revision",
                    (sid,),
                )
            )
            continue
        fields = [name for name in PLANNER_STEP_FIELDS if getattr(old, name) != getattr(new, name)]
        if fields:
            history.append(
                PlanIssue(
                    IssueCode.DONE_STEP_CHANGED,
                    f"step {sid} is done and cannot change, but its {', '.join(fields)} differ; "
                    f"repeat it exactly as it was, or add a new step with a new id for further work",
                    (sid,),
                )
            )
    steps = tuple(done.get(step.id, step) for step in proposed.steps)
    revised = Plan(
        objective=current.objective,
        assumptions=proposed.assumptions,
        non_goals=proposed.non_goals,
        steps=steps,
        requires_approval=proposed.requires_approval,
        revision=current.revision + 1,
    )
    issues = find_issues(revised)
    if history:
        raise PlanRevisionError([*history, *issues])
    if issues:
        raise PlanValidationError(issues)
    return revised


# ------------------------------------------------------------------------------------------------ diff


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldChange(_Frozen):
    field: str
    old: Any
    new: Any


class StepChange(_Frozen):
    id: str
    title: str
    changes: tuple[FieldChange, ...]


class StepRef(_Frozen):
    id: str
    title: str


class PlanDiff(_Frozen):
    """What changed from one plan to another: plan fields, and steps added, removed and changed field by field.

    Values are in JSON form (lists, strings, numbers). Step order alone is not a change.
    """

    plan_changes: tuple[FieldChange, ...] = ()
    added: tuple[StepRef, ...] = ()
    removed: tuple[StepRef, ...] = ()
    changed: tuple[StepChange, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.plan_changes or self.added or self.removed or self.changed)


def _changes(old: BaseModel, new: BaseModel, fields: tuple[str, ...]) -> tuple[FieldChange, ...]:
    old_json = old.model_dump(mode="json", include=set(fields))
    new_json = new.model_dump(mode="json", include=set(fields))
    return tuple(
        FieldChange(field=name, old=old_json[name], new=new_json[name])
        for name in fields
        if old_json[name] != new_json[name]
    )


def diff(old: Plan, new: Plan) -> PlanDiff:
    """The exact difference between two plans (steps matched by id; the first of a duplicated id counts)."""
    old_steps, new_steps = _first_by_id(old), _first_by_id(new)
    step_fields = tuple(Step.model_fields)
    changed = []
    for sid, before in old_steps.items():
        after = new_steps.get(sid)
        if after is not None:
            changes = _changes(before, after, step_fields)
            if changes:
                changed.append(StepChange(id=sid, title=after.title, changes=changes))
    return PlanDiff(
        plan_changes=_changes(old, new, PLAN_DIFF_FIELDS),
        added=tuple(StepRef(id=s.id, title=s.title) for sid, s in new_steps.items() if sid not in old_steps),
        removed=tuple(StepRef(id=s.id, title=s.title) for sid, s in old_steps.items() if sid not in new_steps),
        changed=tuple(changed),
    )


#: How a diff names a field: the words of the plan tree (``after``, ``accept``, ``verify``), not the JSON keys.
FIELD_WORDS: dict[str, str] = {
    "depends_on": "after",
    "acceptance": "accept",
    "needs_pro": "needs pro",
    "non_goals": "non-goals",
    "requires_approval": "requires approval",
}
_SHORT = 60
_NAME_LISTS = frozenset({"depends_on", "reads", "writes"})


def _item(field: str, value: Any) -> str:
    """One item of a list field as the plan says it: a verify command as the tree shows it, text as it is."""
    if field == "verify" and isinstance(value, dict):
        try:
            return verify_text(VerifyCommand.model_validate(value))
        except ValueError:
            pass
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "(none)"
    return str(value) if isinstance(value, str | int | float) else _item("", value)


def _field_lines(change: FieldChange, indent: str) -> list[str]:
    """A changed field in the plan's own words: ``risk: low → high``; a list's items each ``+`` added or ``-``
    dropped; a long or multi-line text as its old and its new wording, each on lines of its own."""
    word = FIELD_WORDS.get(change.field, change.field)
    old, new = change.old, change.new
    if isinstance(old, list) and isinstance(new, list):
        before = [_item(change.field, v) for v in old]
        after = [_item(change.field, v) for v in new]
        if change.field in _NAME_LISTS:  # ids and paths: the old list and the new, as the tree shows them
            return [f"{indent}{word}: {', '.join(before) or '(none)'} → {', '.join(after) or '(none)'}"]
        lines = [f"{indent}{word} - {v}" for v in before if v not in after]
        lines += [f"{indent}{word} + {v}" for v in after if v not in before]
        if not lines:  # the same items in another order
            lines = [f"{indent}{word}: {', '.join(before)} → {', '.join(after)}"]
        return lines
    shown_old, shown_new = _scalar(old), _scalar(new)
    if len(shown_old) + len(shown_new) <= _SHORT * 2 and "\n" not in shown_old + shown_new:
        return [f"{indent}{word}: {shown_old} → {shown_new}"]
    deeper = indent + "    "
    return [
        f"{indent}{word}:",
        *(f"{deeper}- {line}" for line in shown_old.splitlines() or [""]),
        *(f"{deeper}+ {line}" for line in shown_new.splitlines() or [""]),
    ]


def diff_text(d: PlanDiff) -> str:
    """A plain-text rendering in the plan's own words: ``+`` a step added, ``-`` removed, ``~`` changed, then one line
    per changed field (a list field: one line per item added or dropped)."""
    if d.is_empty:
        return "no changes\n"
    lines = [line for c in d.plan_changes for line in _field_lines(c, "")]
    lines += [f"+ {s.id} {s.title}" for s in d.added]
    lines += [f"- {s.id} {s.title}" for s in d.removed]
    for step in d.changed:
        lines.append(f"~ {step.id} {step.title}")
        lines += [line for c in step.changes for line in _field_lines(c, "    ")]
    return "\n".join(lines) + "\n"
