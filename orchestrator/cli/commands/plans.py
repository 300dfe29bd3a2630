"""``reasonix plans``: validate, show and diff plan documents.

* ``plans validate FILE``: exit 0 when the plan is a valid DAG, else exit 1 and print every problem.
* ``plans show FILE [--format tree|table|md|mermaid|json|prompt]``: render a plan (an invalid graph is still shown,
  with a warning on stderr).
* ``plans diff OLD NEW [--format text|json]``: steps added, removed and changed field by field.

``--lenient`` reads a model-made plan the way the supervisor does (aliases, integer ids, ...) and lists what it
normalized. A file that cannot be opened exits 2; a file that is not a plan exits 1 (``plans.loader`` reads every plan
file, and names each problem: not UTF-8, not JSON, nested too deeply, over the size limit, not a plan document).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.exits import ExitCode
from orchestrator.text.wording import counted

if TYPE_CHECKING:
    from plans import Plan

FORMATS = ("tree", "table", "md", "mermaid", "json", "prompt")


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="plans_command", metavar="ACTION", required=True)
    validate = sub.add_parser("validate", help="check a plan; exit 1 listing every problem")
    validate.add_argument("file", type=Path, help="plan JSON file")
    show = sub.add_parser("show", help="render a plan")
    show.add_argument("file", type=Path, help="plan JSON file")
    show.add_argument("--format", choices=FORMATS, default="tree", help="rendering (default: tree)")
    diff = sub.add_parser("diff", help="what changed between two plans")
    diff.add_argument("old", type=Path, help="earlier plan JSON file")
    diff.add_argument("new", type=Path, help="later plan JSON file")
    diff.add_argument("--format", choices=("text", "json"), default="text", help="output (default: text)")
    for p in (validate, show, diff):
        p.add_argument("--lenient", action="store_true", help="read a model-made plan, normalizing common slips")


class _Failed(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _fail(code: int, *lines: str) -> _Failed:
    for line in lines:
        print(line, file=sys.stderr)
    return _Failed(code)


def _read(path: Path, lenient: bool) -> Plan:
    from plans import PlanFileError, load_plan_file

    try:
        loaded = load_plan_file(path, lenient=lenient)
    except PlanFileError as exc:
        raise _fail(ExitCode.USAGE if exc.unreadable else ExitCode.FAILED, str(exc)) from None
    for note in loaded.notes:
        print(f"{path}: normalized: {note}", file=sys.stderr)
    return loaded.plan


def _validate(args: argparse.Namespace) -> int:
    from plans import PlanGraph, find_issues

    plan = _read(args.file, args.lenient)
    issues = find_issues(plan)
    if issues:
        count = len(issues)
        print(f"{args.file}: invalid plan ({counted(count, 'problem')}):")
        for issue in issues:
            print(f"- {issue.message}")
        return 1
    graph = PlanGraph(plan)
    path = graph.critical_path()
    print(
        f"{args.file}: valid plan: {counted(len(plan.steps), 'step')} in {counted(len(graph.generations()), 'wave')}, "
        f"critical path {' → '.join(path)} ({counted(len(path), 'step')})"
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    from plans import dump_plan, find_issues, prompt_text, render_terminal, to_markdown, to_mermaid

    plan = _read(args.file, args.lenient)
    issues = find_issues(plan)
    if issues:
        print(
            f"{args.file}: warning: the plan is invalid ({counted(len(issues), 'problem')}); run `plans validate`",
            file=sys.stderr,
        )
    fmt = args.format
    if fmt != "json":  # shown to a person: control characters made visible, not executed (JSON escapes them)
        from orchestrator.text.safe_text import neutralise_model

        plan = neutralise_model(plan)
    if fmt in ("tree", "table"):
        from rich.console import Console

        console = Console()
        out = render_terminal(plan, kind=fmt, width=console.width, color=console.is_terminal)
    elif fmt == "md":
        out = to_markdown(plan)
    elif fmt == "mermaid":
        out = to_mermaid(plan)
    elif fmt == "prompt":
        out = prompt_text(plan)
    else:
        out = dump_plan(plan)
    sys.stdout.write(out)
    return 0


def _diff(args: argparse.Namespace) -> int:
    from plans import diff, diff_text

    old, new = _read(args.old, args.lenient), _read(args.new, args.lenient)
    result = diff(old, new)
    sys.stdout.write(result.model_dump_json(indent=2) + "\n" if args.format == "json" else diff_text(result))
    return 0


def run(args: argparse.Namespace) -> int:
    actions = {"validate": _validate, "show": _show, "diff": _diff}
    try:
        return actions[args.plans_command](args)
    except _Failed as failed:
        return failed.code
