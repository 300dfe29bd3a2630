"""The plan models' defaults, and the planner tool schema: lean, without supervisor fields, identical run to run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from plans import (
    Plan,
    Risk,
    StepStatus,
    plan_tool_definitions,
    plan_tool_schema,
    plan_tool_schema_bytes,
)


def test_minimal_plan_gets_every_default() -> None:
    plan = Plan.model_validate(
        {"objective": "o", "steps": [{"id": "S1", "title": "t", "instructions": "i", "depends_on": []}]}
    )
    (step,) = plan.steps
    assert (plan.assumptions, plan.non_goals, plan.requires_approval, plan.revision) == ((), (), False, 1)
    assert step.risk is Risk.LOW and step.status is StepStatus.PENDING and step.needs_pro is False
    assert (step.reads, step.writes, step.acceptance, step.verify) == ((), (), (), ())
    assert (step.result, step.evidence) == ("", ())


def test_models_are_strict_and_frozen() -> None:
    with pytest.raises(ValidationError):
        Plan.model_validate({"objective": "o", "steps": [{"id": "S 1", "title": "t", "instructions": "i"}]})
    with pytest.raises(ValidationError):
        Plan.model_validate({"objective": "o", "steps": [], "colour": "red"})
    plan = Plan(objective="o", steps=())
    with pytest.raises(ValidationError):
        plan.objective = "p"  # type: ignore[misc]


def _walk(node: Any, path: str = "") -> list[tuple[str, str]]:
    """(path, key) for every schema keyword, not counting property names."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties":
                for name, sub in value.items():
                    found += _walk(sub, f"{path}.{name}")
            else:
                found.append((path, key))
                found += _walk(value, path)
    elif isinstance(node, list):
        for item in node:
            found += _walk(item, path)
    return found


def test_tool_schema_is_lean_and_leaves_out_supervisor_fields() -> None:
    schema = plan_tool_schema()
    keywords = {key for _, key in _walk(schema)}
    assert not keywords & {"title", "default", "$ref", "$defs", "additionalProperties", "anyOf"}
    assert set(schema["properties"]) == {"objective", "assumptions", "non_goals", "steps", "requires_approval"}
    step = schema["properties"]["steps"]["items"]
    assert "title" in step["properties"]  # the step's title field is a property, not schema metadata
    assert not {"status", "result", "evidence"} & set(step["properties"])
    assert step["required"] == ["id", "title", "instructions"]
    assert step["properties"]["risk"]["enum"] == ["low", "medium", "high"]
    assert len(plan_tool_schema_bytes()) < 1600


def test_tool_schema_dict_and_bytes_agree_and_cannot_be_corrupted() -> None:
    schema = plan_tool_schema()
    assert json.loads(plan_tool_schema_bytes()) == schema
    assert json.dumps(schema, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode() == (
        plan_tool_schema_bytes()
    )
    schema["properties"].clear()
    assert plan_tool_schema()["properties"]
    names = [d["function"]["name"] for d in plan_tool_definitions()]
    assert names == ["submit_plan", "revise_plan"]


def test_tool_schema_bytes_are_identical_across_processes() -> None:
    code = "import sys; from plans import plan_tool_schema_bytes as b; sys.stdout.buffer.write(b())"
    outputs = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=True, timeout=60)
        outputs.add(done.stdout)
    assert outputs == {plan_tool_schema_bytes()}
