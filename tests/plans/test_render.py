"""Renderings: terminal tree and table, Markdown, Mermaid, and canonical prompt text."""

from __future__ import annotations

import json

from plans import Plan, StepStatus, VerifyCommand
from plans.render import plan_tree, prompt_text, render_terminal, to_markdown, to_mermaid

from .strategies import step


def sample() -> Plan:
    return Plan(
        objective="Add a --json flag",
        assumptions=("click is not used",),
        steps=(
            step("S1", [], status=StepStatus.DONE, result="found the parser", writes=("cli.py",)),
            step(
                "S2",
                ["S1"],
                status=StepStatus.RUNNING,
                risk="high",
                needs_pro=True,
                verify=(VerifyCommand(command="pytest -q", timeout_s=60),),
            ),
            step("S3", ["S1"], title='quote " and | pipe'),
            step("S4", ["S2", "S3"], status=StepStatus.FAILED),
        ),
    )


def test_tree_shows_waves_and_each_state() -> None:
    text = render_terminal(sample(), width=120)
    lines = text.splitlines()
    assert "Add a --json flag" in lines[0] and "1/4 done" in lines[0]
    assert [line.strip("│├└─ ") for line in lines if "wave" in line] == ["wave 1", "wave 2", "wave 3"]
    assert any("✓ S1" in line and "done" in line for line in lines)
    assert any("◐ S2" in line and "high risk" in line and "pro" in line for line in lines)
    assert any("✗ S4" in line and "after S2, S3" in line for line in lines)
    assert "verify `pytest -q` (60s)" in text
    assert "\x1b[" not in text
    assert "\x1b[" in render_terminal(sample(), color=True)
    assert plan_tree(sample()).label is not None


def test_tree_of_an_invalid_plan_lists_steps_in_document_order() -> None:
    plan = Plan(objective="o", steps=(step("B", ["A"]), step("A", ["B"])))
    text = render_terminal(plan)
    assert "wave" not in text and text.index("B do B") < text.index("A do A")


def test_table_has_a_row_per_step() -> None:
    text = render_terminal(sample(), kind="table", width=120)
    for sid in ("S1", "S2", "S3", "S4"):
        assert any(f" {sid} " in line for line in text.splitlines())
    assert "running" in text and "failed" in text


def test_markdown() -> None:
    md = to_markdown(sample())
    assert md.startswith("# Add a --json flag\n")
    assert "| ✓ | S1 | do S1 |  | low | done |" in md
    assert 'quote " and \\| pipe' in md
    assert "- Verify: `pytest -q` (60s)" in md and "- Result: found the parser" in md


def test_mermaid() -> None:
    mermaid = to_mermaid(sample())
    lines = mermaid.splitlines()
    assert lines[0] == "flowchart TD"
    assert '    n2["S3: quote #quot; and | pipe"]' in lines
    assert {"    n0 --> n1", "    n0 --> n2", "    n1 --> n3", "    n2 --> n3"} <= set(lines)
    assert "    class n0 done" in lines and "    class n3 failed" in lines


def test_prompt_text_is_canonical_for_equal_plans() -> None:
    plan = sample()
    rebuilt = Plan.model_validate(json.loads(plan.model_dump_json()))
    assert rebuilt == plan and rebuilt is not plan
    assert prompt_text(rebuilt).encode() == prompt_text(plan).encode()
    text = prompt_text(plan)
    assert text.startswith("objective: Add a --json flag\nassumptions:\n- click is not used\n\n## S1: do S1 [done]\n")
    assert '## S3: quote " and | pipe\nafter: S1\nwork on S3\n' in text  # pending and low risk say nothing
    assert "risk: high; needs pro" in text
    changed = plan.with_statuses({"S3": StepStatus.DONE})
    assert prompt_text(changed) != text
    assert prompt_text(plan.model_copy(update={"revision": 7})) == text
