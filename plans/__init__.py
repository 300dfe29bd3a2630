"""Plan documents: schema, DAG validation and scheduling, revisions and diffs, rendering, storage.

Imports nothing else of ours (DESIGN §2).
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
