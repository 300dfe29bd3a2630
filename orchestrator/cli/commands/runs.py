"""``reasonix runs``: the past runs of the workspace, newest first; ``reasonix runs show [ID]``: one run's plan,
events, costs per session and checkpoints (without an id: the latest run). ``--json`` for both. An id may be shortened
to any unique prefix; a prefix of several ids lists them as ambiguous, an unknown id the nearest ones.

Exit status: 0; 1 an unknown run; 2 a usage problem (the workspace is not a directory).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.runs.history import RunSummary


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=("show",), help="show: one run in full")
    parser.add_argument(
        "run_id", nargs="?", metavar="RUN_ID", help="the run to show (a unique prefix will do; default: the latest)"
    )
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="list only the N newest runs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _pct(ratio: float | None) -> str:
    return f"{ratio * 100:.1f} %" if ratio is not None else "–"


def _steps(run: RunSummary) -> str:
    return f"{run.steps_done}/{run.steps_total}" if run.steps_total is not None else "–"


def _when(run: RunSummary) -> str:
    return run.started[:16].replace("T", " ")


def summary_json(run: RunSummary) -> dict[str, Any]:
    data = run.model_dump(mode="json")
    data.pop("hit_ratio", None)  # named as in every other --json summary
    data["cache_hit_ratio"] = round(run.hit_ratio, 6) if run.hit_ratio is not None else None
    data["cost_usd"] = round(run.cost_usd, 6)
    data["sessions"] = {
        name: {
            **s.model_dump(mode="json", exclude={"hit_ratio"}),
            "cache_hit_ratio": s.hit_ratio,
            "cost_usd": round(s.cost_usd, 6),
        }
        for name, s in run.sessions.items()
    }
    if run.resumable:
        data["resume_command"] = f"reasonix goal --resume {run.run_id}"
    return data


def _list(runs: list[RunSummary], as_json: bool) -> int:
    from orchestrator.text.safe_text import neutralise
    from orchestrator.text.wording import shorten

    if as_json:
        print(json.dumps([summary_json(r) for r in runs], ensure_ascii=False, indent=2))
        return 0
    if not runs:
        print("no runs in this workspace yet (reasonix goal, plan, exec and run each leave one)")
        return 0
    header = ("run", "when (UTC)", "command", "status", "steps", "requests", "cache", "cost", "objective")
    rows = [
        (
            r.run_id,
            _when(r),
            r.command,
            r.status,
            _steps(r),
            str(r.requests),
            _pct(r.hit_ratio),
            f"${r.cost_usd:.4f}",
            shorten(neutralise(r.objective), 50),  # the model's or a repository's text: never executed
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])
    resumable = next((r for r in runs if r.resumable), None)
    if resumable is not None:
        print(f"\nresume the latest resumable run ({resumable.run_id}) with: reasonix goal --resume")
    return 0


def _joined(items: Any) -> str:
    return ", ".join(str(i) for i in items) if isinstance(items, list) else ""


EVENT_LINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "goal_state": lambda e: f"» {e.get('state')}" + (f": {e['reason']}" if e.get("reason") else ""),
    "plan_proposed": lambda e: f"plan r{e.get('revision')} proposed",
    "plan_rejected": lambda e: f"plan rejected (attempt {e.get('attempt')}): {'; '.join(e.get('errors', []))}",
    "plan_revised": lambda e: f"plan revised to r{e.get('revision')} ({e.get('reason', '')})",
    "review": lambda e: f"review: {e.get('decision')}" + (" (automatic)" if e.get("automatic") else ""),
    "step_started": lambda e: (
        f"◐ {e.get('step_id', '')} {e.get('title', '')} · attempt {e.get('attempt')} · {e.get('model')}"
    ),
    "step_reported": lambda e: f"  {e.get('step_id', '')} reported {e.get('status')}: {e.get('summary', '')}",
    "step_verified": lambda e: (
        f"{'✓' if e.get('ok') else '✗'} {e.get('step_id', '')} {'verified' if e.get('ok') else 'failed verification'}"
        + (f": {'; '.join(e['problems'])}" if e.get("problems") else "")
    ),
    "wave_started": lambda e: f"⇉ wave: {_joined(e.get('step_ids'))} at once, each in its own branch",
    "branch_merged": lambda e: (
        f"⇢ {e.get('step_id', '')} merged" + (f": {_joined(e.get('changed'))}" if e.get("changed") else "")
    ),
    "branch_rerun": lambda e: f"↺ {e.get('step_id', '')} not merged, runs again alone: {e.get('reason', '')}",
    "escalation": lambda e: f"↑ {e.get('session')} escalated to {e.get('to_model')}: {e.get('reason', '')}",
    "pro_asked_for_pro": lambda e: f"↑ {e.get('session')}: {e.get('model')} asked for pro: {e.get('reason', '')}",
    "budget_warning": lambda e: f"! budget: {e.get('resource')} {e.get('used')} of {e.get('limit')}",
    "goal_waiting": lambda e: f"… waited {e.get('wait_s', 0):.0f} s (outage {e.get('attempt')}): {e.get('reason', '')}",
    "subagent_finished": lambda e: _subagent_line(e),
    "goal_finished": lambda e: f"■ {e.get('status')}: {e.get('summary', '')}",
}
"""``runs show``'s line for each goal event kind (``orchestrator.events.GOAL_EVENT_KINDS``; a test holds that every
kind has one). Session events are summed up under "cost per session" instead."""


def _subagent_line(event: dict[str, Any]) -> str:
    from orchestrator.events import SubagentFinished

    try:
        return "⑂ " + SubagentFinished.model_validate(event).words()
    except ValueError:  # a line another version wrote
        return f"⑂ subagent {event.get('session', '?')} finished"


def _event_line(event: dict[str, Any]) -> str | None:
    """The event's line, its control characters shown instead of executed (a title, summary or reason may carry the
    model's escape sequences)."""
    from orchestrator.text.safe_text import neutralise

    line = EVENT_LINES.get(str(event.get("kind")))
    return neutralise(line(event)) if line is not None else None


def _show(workspace: Path, run: RunSummary, as_json: bool) -> int:
    from rich.console import Console

    from orchestrator.checkpoints.ledger import Ledger
    from orchestrator.runs.history import run_events, run_plan
    from orchestrator.text.safe_text import neutralise, neutralise_model
    from orchestrator.text.wording import shorten
    from orchestrator.ui.goal_lines import print_whole
    from plans import plan_tree

    plan = run_plan(workspace, run.run_id)
    events = run_events(workspace, run.run_id)
    checkpoints = [c for c in Ledger(workspace).read() if c.run_id == run.run_id]
    if as_json:
        data = {
            "run": summary_json(run),
            "plan": plan.model_dump(mode="json") if plan is not None else None,
            "events": events,
            "checkpoints": [c.model_dump(mode="json") for c in checkpoints],
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    print(f"run {run.run_id} · {run.command} · {run.status} · started {_when(run)} UTC")
    print(f"objective: {shorten(neutralise(run.objective), 200)}")
    print(f"steps {_steps(run)} · {run.requests} requests · cache {_pct(run.hit_ratio)} · ${run.cost_usd:.4f}")
    if run.resumable:
        print(f"resume with: reasonix goal --resume {run.run_id}")
    if plan is not None:
        print(f"\nplan r{plan.revision}")
        print_whole(Console(highlight=False), plan_tree(neutralise_model(plan), detail=True))  # as the live view
    lines = [line for e in events if (line := _event_line(e)) is not None]
    if lines:
        print("\nevents")
        for line in lines:
            print("  " + shorten(line, 160))
    if run.sessions:
        print("\ncost per session")
        for name, s in run.sessions.items():
            print(
                f"  {neutralise(name):<9} {s.requests} requests · {s.prompt_tokens} prompt tokens · cache "
                f"{_pct(s.hit_ratio)} · {s.completion_tokens} output tokens · ${s.cost_usd:.4f}"
            )
    if checkpoints:
        print(f"\ncheckpoints ({len(checkpoints)}): reasonix checkpoints --run {run.run_id}")
    return 0


def run(args: argparse.Namespace) -> int:
    from orchestrator.goal.store import RunNotFoundError
    from orchestrator.policy.workspace_rule import WorkspaceError, check_workspace
    from orchestrator.runs.history import list_runs, resolve_run

    try:
        workspace = check_workspace(args.workspace)
    except WorkspaceError as exc:
        print(f"reasonix runs: {exc}", file=sys.stderr)
        return 2
    runs = list_runs(workspace)
    if args.action is None:
        if args.run_id is not None:
            print(f"reasonix runs: to see one run, say: reasonix runs show {args.run_id}", file=sys.stderr)
            return 2
        return _list(runs[: args.limit] if args.limit > 0 else runs, args.json)
    if args.run_id is None:  # the latest run, as `reasonix undo` takes the latest
        if not runs:
            print("reasonix runs: there are no runs in this workspace yet", file=sys.stderr)
            return 1
        return _show(workspace, runs[0], args.json)
    try:
        found = resolve_run(workspace, args.run_id, runs)
    except RunNotFoundError as exc:
        print(f"reasonix runs: {exc}", file=sys.stderr)
        return 1
    return _show(workspace, found, args.json)
