"""Renderings of a plan: a rich tree or table for the terminal, Markdown, Mermaid, and compact text for prompts.

Every rendering is a pure function of the plan: equal plans give equal output. :func:`prompt_text` in particular is
what goes into model requests, so it leaves out nothing-saying defaults and never depends on anything but the plan.
"""

from __future__ import annotations

import io
from typing import Literal

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from .errors import PlanValidationError
from .graph import PlanGraph
from .schema import Plan, Risk, Step, StepStatus, VerifyCommand

SYMBOL: dict[StepStatus, str] = {
    StepStatus.PENDING: "○",
    StepStatus.RUNNING: "◐",
    StepStatus.DONE: "✓",
    StepStatus.FAILED: "✗",
    StepStatus.BLOCKED: "⊘",
    StepStatus.SKIPPED: "↷",
}
STYLE: dict[StepStatus, str] = {
    StepStatus.PENDING: "",
    StepStatus.RUNNING: "bold yellow",
    StepStatus.DONE: "green",
    StepStatus.FAILED: "bold red",
    StepStatus.BLOCKED: "magenta",
    StepStatus.SKIPPED: "dim",
}
RISK_STYLE: dict[Risk, str] = {Risk.LOW: "", Risk.MEDIUM: "yellow", Risk.HIGH: "bold red"}


def verify_text(command: VerifyCommand) -> str:
    extras = []
    if command.expect_exit != 0:
        extras.append(f"exit {command.expect_exit}")
    if command.timeout_s is not None:
        extras.append(f"{command.timeout_s:g}s")
    return f"`{command.command}`" + (f" ({', '.join(extras)})" if extras else "")


# ------------------------------------------------------------------------------------------------ terminal


def _waves(plan: Plan) -> tuple[tuple[str, ...], ...] | None:
    try:
        return PlanGraph(plan).generations()
    except PlanValidationError:
        return None


def _step_label(step: Step) -> Text:
    label = Text()
    label.append(f"{SYMBOL[step.status]} ", style=STYLE[step.status])
    label.append(step.id, style="bold")
    label.append(f" {step.title}", style=STYLE[step.status])
    meta = [step.status.value]
    if step.depends_on:
        meta.append("after " + ", ".join(step.depends_on))
    label.append("  " + " · ".join(meta), style="dim")
    if step.risk is not Risk.LOW:
        label.append(f" · {step.risk.value} risk", style=RISK_STYLE[step.risk])
    if step.needs_pro:
        label.append(" · pro", style="cyan")
    return label


def _add_step(parent: Tree, step: Step, detail: bool) -> None:
    node = parent.add(_step_label(step))
    if detail and step.instructions.strip():
        node.add(Text(step.instructions.strip()))
    if detail:
        for criterion in step.acceptance:
            node.add(Text("accept " + criterion, style="dim"))
    if detail and step.reads:
        node.add(Text("reads " + ", ".join(step.reads), style="dim"))
    if step.writes:
        node.add(Text("writes " + ", ".join(step.writes), style="dim"))
    for command in step.verify:
        node.add(Text("verify " + verify_text(command), style="dim"))
    if step.writes and not step.verify:
        node.add(Text("no verify command: nothing the supervisor runs would show this step is done", style="yellow"))
    if step.result:
        node.add(Text("result " + step.result, style="italic"))


def plan_tree(plan: Plan, *, detail: bool = False) -> Tree:
    """The plan as a tree: objective, then waves of steps that may run together (or document order if invalid).

    Each step shows what it writes and its verify commands; ``detail`` adds what a reviewer reads before approving:
    its instructions, acceptance criteria and reads (long lines wrap at the console's width)."""
    done = sum(step.status is StepStatus.DONE for step in plan.steps)
    root = Tree(Text.assemble((plan.objective, "bold"), (f"  r{plan.revision} · {done}/{len(plan.steps)} done", "dim")))
    by_id = {step.id: step for step in reversed(plan.steps)}
    waves = _waves(plan)
    if waves is None:
        for step in plan.steps:
            _add_step(root, step, detail)
        return root
    for number, wave in enumerate(waves, 1):
        branch = root if len(waves) == 1 else root.add(Text(f"wave {number}", style="dim"))
        for sid in wave:
            _add_step(branch, by_id[sid], detail)
    return root


def plan_table(plan: Plan) -> Table:
    """One row per step in document order: state, id, title, dependencies, risk."""
    table = Table(title=plan.objective, title_justify="left")
    for column in ("", "id", "title", "after", "risk", "status"):
        table.add_column(column)
    for step in plan.steps:
        table.add_row(
            Text(SYMBOL[step.status], style=STYLE[step.status]),
            Text(step.id, style="bold"),
            Text(step.title),
            Text(", ".join(step.depends_on)),
            Text(step.risk.value + (" · pro" if step.needs_pro else ""), style=RISK_STYLE[step.risk]),
            Text(step.status.value, style=STYLE[step.status]),
        )
    return table


def render_terminal(
    plan: Plan, *, kind: Literal["tree", "table"] = "tree", width: int = 100, color: bool = False
) -> str:
    """The tree or table as a string (ANSI colours only when ``color``)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None)
    console.print(Group(plan_tree(plan)) if kind == "tree" else plan_table(plan))
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ markdown


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(plan: Plan) -> str:
    status_line = f"Revision {plan.revision}" + (" · requires approval" if plan.requires_approval else "")
    lines = [f"# {plan.objective}", "", status_line]
    for heading, items in (("Assumptions", plan.assumptions), ("Non-goals", plan.non_goals)):
        if items:
            lines += ["", f"**{heading}**", "", *(f"- {item}" for item in items)]
    lines += ["", "| | Step | Title | Depends on | Risk | Status |", "|---|---|---|---|---|---|"]
    for step in plan.steps:
        lines.append(
            f"| {SYMBOL[step.status]} | {_cell(step.id)} | {_cell(step.title)} | {', '.join(step.depends_on)} "
            f"| {step.risk.value}{' · pro' if step.needs_pro else ''} | {step.status.value} |"
        )
    for step in plan.steps:
        lines += ["", f"## {step.id}: {step.title}", "", step.instructions]
        details = []
        if step.reads:
            details.append("- Reads: " + ", ".join(f"`{p}`" for p in step.reads))
        if step.writes:
            details.append("- Writes: " + ", ".join(f"`{p}`" for p in step.writes))
        details += [f"- Acceptance: {a}" for a in step.acceptance]
        details += [f"- Verify: {verify_text(v)}" for v in step.verify]
        if step.result:
            details.append(f"- Result: {step.result}")
        details += [f"- Evidence: {e}" for e in step.evidence]
        if details:
            lines += ["", *details]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ mermaid


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", " ")


def to_mermaid(plan: Plan) -> str:
    """A ``flowchart TD``: an arrow from each dependency to its dependent, nodes classed by status."""
    node: dict[str, str] = {}
    for i, step in enumerate(plan.steps):
        node.setdefault(step.id, f"n{i}")
    lines = ["flowchart TD"]
    for i, step in enumerate(plan.steps):
        lines.append(f'    n{i}["{_mermaid_label(step.id)}: {_mermaid_label(step.title)}"]')
    for i, step in enumerate(plan.steps):
        lines += [f"    {node[dep]} --> n{i}" for dep in dict.fromkeys(step.depends_on) if dep in node]
    colours = {
        StepStatus.RUNNING: "fill:#fff3cd,stroke:#b58900",
        StepStatus.DONE: "fill:#d4edda,stroke:#2e7d32",
        StepStatus.FAILED: "fill:#f8d7da,stroke:#c62828",
        StepStatus.BLOCKED: "fill:#ead7f8,stroke:#6a1b9a",
        StepStatus.SKIPPED: "fill:#eeeeee,stroke:#9e9e9e,stroke-dasharray:4",
    }
    for status, style in colours.items():
        members = [f"n{i}" for i, step in enumerate(plan.steps) if step.status is status]
        if members:
            lines += [f"    classDef {status.value} {style}", f"    class {','.join(members)} {status.value}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ prompt text


def _block(label: str, items: tuple[str, ...]) -> list[str]:
    return [f"{label}:", *(f"- {item}" for item in items)] if items else []


def step_prompt_text(step: Step) -> str:
    """One step, compactly: what an executor turn or a planner needs to know about it."""
    head = f"## {step.id}: {step.title}"
    if step.status is not StepStatus.PENDING:
        head += f" [{step.status.value}]"
    lines = [head]
    if step.depends_on:
        lines.append("after: " + ", ".join(step.depends_on))
    if step.risk is not Risk.LOW or step.needs_pro:
        lines.append("risk: " + step.risk.value + ("; needs pro" if step.needs_pro else ""))
    if step.reads:
        lines.append("reads: " + ", ".join(step.reads))
    if step.writes:
        lines.append("writes: " + ", ".join(step.writes))
    lines.append(step.instructions)
    lines += _block("acceptance", step.acceptance)
    lines += _block("verify", tuple(verify_text(v) for v in step.verify))
    if step.result:
        lines.append("result: " + step.result)
    lines += _block("evidence", step.evidence)
    return "\n".join(lines)


def prompt_text(plan: Plan) -> str:
    """The plan as compact text for a prompt; byte-identical for equal plans (the revision number is left out)."""
    lines = [f"objective: {plan.objective}"]
    lines += _block("assumptions", plan.assumptions)
    lines += _block("non-goals", plan.non_goals)
    if plan.requires_approval:
        lines.append("requires approval before executing")
    parts = ["\n".join(lines), *(step_prompt_text(step) for step in plan.steps)]
    return "\n\n".join(parts) + "\n"
