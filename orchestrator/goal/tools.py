"""The tools through which the planner and the executor talk to the supervisor (DESIGN §5).

Planner: ``submit_plan``, ``revise_plan``, ``goal_verdict``. Executor: ``report_step``. Each records what the model
said in a :class:`Mailbox` the supervisor reads after the turn, and answers the model with what happens next. A call
that succeeds ends the turn (``ends_turn``): its result is the last message of the turn, and no request is sent only to
collect closing words (DESIGN §5 "Turn boundaries"). An
invalid plan is answered with its errors, written for the model, so it can fix the plan in its next request.

They are ``read_only`` (they never touch the workspace), so the planner's read-only mode allows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from plans import (
    REVISE_PLAN,
    SUBMIT_PLAN,
    Plan,
    PlanError,
    PlanReadError,
    StepStatus,
    evidence_problems,
    find_issues,
    plan_tool_schema,
    read_plan,
    revise,
)
from sessions.tools import Tool, ToolContext, ToolResult
from sessions.wire import FunctionSchema, ToolSchema


@dataclass
class Mailbox:
    """What the models handed to the supervisor during the last turn. The supervisor clears it before each turn."""

    objective: str = ""
    current_plan: Plan | None = None
    plan: Plan | None = None
    plan_notes: tuple[str, ...] = ()
    rejections: list[tuple[str, ...]] = field(default_factory=list)
    verdict: GoalVerdictArgs | None = None
    report: ReportStepArgs | None = None

    def clear(self) -> None:
        self.plan = None
        self.plan_notes = ()
        self.rejections = []
        self.verdict = None
        self.report = None


class _AnyArgs(BaseModel):
    """Plan arguments are read leniently by the tool itself, so dispatch lets every shape through."""

    model_config = ConfigDict(extra="allow", frozen=True)


def _with_done_steps(current: Plan, proposal: Plan) -> Plan:
    """A revision may leave out steps that are done: they are kept as they were, in front."""
    proposed_ids = set(proposal.ids)
    kept = tuple(s for s in current.steps if s.status is StepStatus.DONE and s.id not in proposed_ids)
    if not kept:
        return proposal
    return proposal.model_copy(update={"steps": kept + proposal.steps})


class _PlanTool(Tool[_AnyArgs]):
    args_model = _AnyArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = False
    revising: ClassVar[bool] = False

    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    def schema(self) -> ToolSchema:
        return ToolSchema(
            function=FunctionSchema(name=self.name, description=self.description, parameters=plan_tool_schema())
        )

    async def run(self, args: _AnyArgs, ctx: ToolContext) -> ToolResult:
        box = self.mailbox
        attempt = len(box.rejections) + 1
        try:
            lenient = read_plan(args.model_dump(), objective=box.objective)
            proposal = lenient.plan
            current = box.plan or box.current_plan
            if current is not None:
                plan = revise(current, _with_done_steps(current, proposal))
            else:
                issues = find_issues(proposal)
                if issues:
                    raise PlanReadError([i.message for i in issues])
                plan = proposal
            problems = evidence_problems(plan)
            if problems:  # DESIGN §5 "Evidence from the host": sent back before review, with the reason
                raise PlanReadError(problems)
        except PlanError as exc:
            errors = tuple(_errors_of(exc))
            box.rejections.append(errors)
            listing = "\n".join(f"- {e}" for e in errors)
            return ToolResult.error(
                f"The plan was not accepted (attempt {attempt}). Fix every problem and call {self.name} again:\n"
                f"{listing}"
            )
        box.plan = plan
        box.plan_notes = lenient.notes
        note = ("\nNormalized: " + "; ".join(lenient.notes)) if lenient.notes else ""
        return ToolResult(
            content=f"Plan accepted as revision {plan.revision} with {len(plan.steps)} steps. "
            f"End your turn now; the supervisor takes it from here.{note}",
            ends_turn=True,
        )


def _errors_of(exc: PlanError) -> list[str]:
    issues = getattr(exc, "issues", None)
    if issues:
        return [i.message for i in issues]
    problems = getattr(exc, "problems", None)
    if problems:
        return [str(p) for p in problems]
    return [str(exc)]


class SubmitPlanTool(_PlanTool):
    name: ClassVar[str] = SUBMIT_PLAN
    description: ClassVar[str] = "Submit the plan: steps form a DAG via depends_on."


class RevisePlanTool(_PlanTool):
    name: ClassVar[str] = REVISE_PLAN
    description: ClassVar[str] = (
        "Replace the unfinished steps of the current plan. Done steps are kept as they are (you may omit them); "
        "keep ids meaning the same; use new ids for new work."
    )


class GoalVerdictArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    verdict: Literal["complete", "blocked"]
    evidence: list[str] = Field(default_factory=list, description="what shows the objective is met")
    question: str = Field(default="", description="when blocked: what only the user can answer")


class GoalVerdictTool(Tool[GoalVerdictArgs]):
    name: ClassVar[str] = "goal_verdict"
    description: ClassVar[str] = (
        "Give the verdict on the whole goal: complete (with evidence) or blocked (with the question only the user "
        "can answer)."
    )
    args_model = GoalVerdictArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = False

    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def run(self, args: GoalVerdictArgs, ctx: ToolContext) -> ToolResult:
        if args.verdict == "blocked" and not args.question.strip():
            return ToolResult.error("A blocked verdict needs the question only the user can answer.")
        self.mailbox.verdict = args
        return ToolResult(content=f"Verdict recorded: {args.verdict}. End your turn now.", ends_turn=True)


class ReportStepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    step_id: str
    status: Literal["done", "failed", "blocked"]
    summary: str
    evidence: list[str] = Field(default_factory=list, description="files changed, commands run and their results")


class ReportStepTool(Tool[ReportStepArgs]):
    name: ClassVar[str] = "report_step"
    description: ClassVar[str] = (
        "Report the step you were given: done, failed or blocked, with a summary and evidence. The supervisor runs "
        "the step's verify commands itself."
    )
    args_model = ReportStepArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = False

    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def run(self, args: ReportStepArgs, ctx: ToolContext) -> ToolResult:
        self.mailbox.report = args
        return ToolResult(
            content=f"Report for {args.step_id} recorded ({args.status}). End your turn now.", ends_turn=True
        )


def planner_tools(mailbox: Mailbox) -> list[Tool[Any]]:
    return [SubmitPlanTool(mailbox), RevisePlanTool(mailbox), GoalVerdictTool(mailbox)]


def executor_tools(mailbox: Mailbox) -> list[Tool[Any]]:
    return [ReportStepTool(mailbox)]
