"""Plan documents: the schema (a frozen pydantic model the planner's tools are made from), DAG validation that names
every problem, scheduling, revisions that keep done steps as history, diffs, renderings (terminal, Markdown, Mermaid,
the compact text sent to the model), the lenient reader for model-made plans, and storage of one file per revision.
Imports nothing else of ours (DESIGN §2); the plan document is described in DESIGN §5, its errors in DESIGN §8.
"""

from .errors import (
    IssueCode,
    PlanError,
    PlanIssue,
    PlanReadError,
    PlanRevisionError,
    PlanStorageError,
    PlanValidationError,
)
from .graph import PlanGraph, find_issues, validate
from .lenient import LenientPlan, read_plan
from .revision import PlanDiff, diff, diff_text, revise
from .schema import (
    REVISE_PLAN,
    SUBMIT_PLAN,
    Plan,
    Risk,
    Step,
    StepStatus,
    VerifyCommand,
    plan_tool_definitions,
    plan_tool_schema,
    plan_tool_schema_bytes,
)

__all__ = [
    "REVISE_PLAN",
    "SUBMIT_PLAN",
    "IssueCode",
    "LenientPlan",
    "Plan",
    "PlanDiff",
    "PlanError",
    "PlanGraph",
    "PlanIssue",
    "PlanReadError",
    "PlanRevisionError",
    "PlanStorageError",
    "PlanValidationError",
    "Risk",
    "Step",
    "StepStatus",
    "VerifyCommand",
    "diff",
    "diff_text",
    "find_issues",
    "plan_tool_definitions",
    "plan_tool_schema",
    "plan_tool_schema_bytes",
    "read_plan",
    "revise",
    "validate",
]
