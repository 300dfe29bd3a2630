"""Plan documents: the schema (a frozen pydantic model the planner's tools are made from), DAG validation that names
every problem, scheduling, revisions that keep done steps as history, diffs, renderings (terminal, Markdown, Mermaid,
the compact text sent to the model), the lenient reader for model-made plans, and storage of one file per revision.
Imports nothing else of ours (DESIGN §2); the plan document is described in DESIGN §5, its errors in DESIGN §8.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plans.errors import (
        IssueCode,
        PlanError,
        PlanFileError,
        PlanIssue,
        PlanReadError,
        PlanRevisionError,
        PlanStorageError,
        PlanValidationError,
    )
    from plans.evidence import NO_VERIFY_HINT, acceptance_commands, evidence_problems, unverified_writers
    from plans.graph import PlanGraph, find_issues, validate
    from plans.lenient import LenientPlan, read_plan
    from plans.loader import load_plan_file
    from plans.paths import paths_overlap
    from plans.render import (
        plan_tree,
        prompt_text,
        render_terminal,
        step_prompt_text,
        to_markdown,
        to_mermaid,
        verify_text,
    )
    from plans.revision import PLANNER_STEP_FIELDS, PlanDiff, diff, diff_text, revise
    from plans.schema import (
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
    from plans.storage import dump_plan, load_latest, revision_path, save_revision, write_atomic

__all__ = [
    "NO_VERIFY_HINT",
    "PLANNER_STEP_FIELDS",
    "REVISE_PLAN",
    "SUBMIT_PLAN",
    "IssueCode",
    "LenientPlan",
    "Plan",
    "PlanDiff",
    "PlanError",
    "PlanFileError",
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
    "acceptance_commands",
    "diff",
    "diff_text",
    "dump_plan",
    "evidence_problems",
    "find_issues",
    "load_latest",
    "load_plan_file",
    "paths_overlap",
    "plan_tool_definitions",
    "plan_tool_schema",
    "plan_tool_schema_bytes",
    "plan_tree",
    "prompt_text",
    "read_plan",
    "render_terminal",
    "revise",
    "revision_path",
    "save_revision",
    "step_prompt_text",
    "to_markdown",
    "to_mermaid",
    "unverified_writers",
    "validate",
    "verify_text",
    "write_atomic",
]

_HOME = {
    "NO_VERIFY_HINT": "evidence",
    "IssueCode": "errors",
    "LenientPlan": "lenient",
    "PLANNER_STEP_FIELDS": "revision",
    "Plan": "schema",
    "PlanDiff": "revision",
    "PlanError": "errors",
    "PlanFileError": "errors",
    "PlanGraph": "graph",
    "PlanIssue": "errors",
    "PlanReadError": "errors",
    "PlanRevisionError": "errors",
    "PlanStorageError": "errors",
    "PlanValidationError": "errors",
    "REVISE_PLAN": "schema",
    "Risk": "schema",
    "SUBMIT_PLAN": "schema",
    "Step": "schema",
    "StepStatus": "schema",
    "VerifyCommand": "schema",
    "acceptance_commands": "evidence",
    "diff": "revision",
    "diff_text": "revision",
    "dump_plan": "storage",
    "evidence_problems": "evidence",
    "find_issues": "graph",
    "load_latest": "storage",
    "load_plan_file": "loader",
    "paths_overlap": "paths",
    "plan_tool_definitions": "schema",
    "plan_tool_schema": "schema",
    "plan_tool_schema_bytes": "schema",
    "plan_tree": "render",
    "prompt_text": "render",
    "read_plan": "lenient",
    "render_terminal": "render",
    "revise": "revision",
    "revision_path": "storage",
    "save_revision": "storage",
    "step_prompt_text": "render",
    "to_markdown": "render",
    "to_mermaid": "render",
    "unverified_writers": "evidence",
    "validate": "graph",
    "verify_text": "render",
    "write_atomic": "storage",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = importlib.import_module(f"{__name__}.{home}")
        if home != name:
            value = getattr(value, name)
        globals()[name] = value
        return value
