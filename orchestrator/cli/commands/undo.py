"""``reasonix undo``: take back the last step of the latest run; ``--run ID [--step S]``: a chosen step of a chosen
run and every step after it. Files go back byte for byte (executable bits and symlinks too); files a step created are
removed, files it deleted come back. Only the files the steps changed are touched.

A file the agent changed that was changed again since (by hand, or by a later run) is never overwritten silently: on
a terminal you are asked; without one the undo refuses and names the files (``--keep`` undoes the rest and keeps
them, ``--force`` overwrites them). Either way the workspace as it was is kept in a checkpoint first, so every undo
can be taken back: ``reasonix undo --run undo-…``.

Exit status: 0 undone (or nothing to do); 1 refused, cancelled, or nothing to undo; 2 a usage problem (no git).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", metavar="RUN_ID", help="the run to undo steps of (default: the latest)")
    parser.add_argument("--step", metavar="STEP", help="take back this step and every step after it")
    conflicts = parser.add_mutually_exclusive_group()
    conflicts.add_argument("--force", action="store_true", help="overwrite files changed by hand since the agent")
    conflicts.add_argument("--keep", action="store_true", help="keep files changed by hand since; undo the rest")
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    parser.add_argument("--json", action="store_true", help="print what was done as one JSON object")


class _Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def _undo(args: argparse.Namespace, workspace: Path) -> dict[str, Any]:
    from orchestrator.checkpoints.git import ShadowRepo, find_git
    from orchestrator.checkpoints.ledger import Ledger, run_ids
    from orchestrator.checkpoints.undo import apply_undo, plan_undo
    from orchestrator.ui.undo_lines import ask_about_conflicts, conflict_stat, describe

    if find_git() is None:
        raise _Stop(2, "git is not installed (or not on PATH): checkpoints and undo need it")
    repo = ShadowRepo(workspace)
    run_id = args.run
    if run_id is not None:
        known = run_ids(Ledger(workspace).read())
        matches = [r for r in known if r == run_id] or [r for r in known if r.startswith(run_id)]
        if len(matches) != 1:
            raise _Stop(1, _unknown(workspace, run_id, known))
        run_id = matches[0]
    elif args.step is not None:
        raise _Stop(2, "--step needs --run: say which run, e.g. reasonix undo --run RUN_ID --step S2")
    plan = await plan_undo(repo, run_id=run_id, step_id=args.step)
    if not args.json:
        print("\n".join(describe(plan)))
    overwrite = bool(args.force)
    if plan.conflicts and not args.force and not args.keep:
        stat = await conflict_stat(repo, plan)
        if not sys.stdin.isatty():
            raise _Stop(
                1,
                f"refusing to undo: {', '.join(plan.conflicts)} changed after the agent (by hand, or by a later run), "
                "and there is no terminal to ask on.\n" + stat + "\nRe-run with --keep to undo everything else and "
                "keep those files, or --force to overwrite them (their current content is kept in a checkpoint).",
            )
        decided = ask_about_conflicts(plan, stat)
        if decided is None:
            raise _Stop(1, "cancelled; nothing was changed")
        overwrite = decided
    if not plan.restore:
        return {"kind": "undo", "run_id": plan.run_id, "restored": [], "kept": [], "undo_id": None}
    after = await apply_undo(repo, plan, overwrite=overwrite)
    kept = [] if overwrite else list(plan.conflicts)
    return {
        "kind": "undo",
        "run_id": plan.run_id,
        "steps": [sr.before.step_id for sr in plan.steps],
        "restored": [c.model_dump() for c in plan.restore if c.path not in kept],
        "kept": kept,
        "undo_id": after.run_id,
        "redo_command": f"reasonix undo --run {after.run_id}",
    }


def _unknown(workspace: Path, run_id: str, known: list[str]) -> str:
    import difflib

    from orchestrator.runs.history import list_runs
    from orchestrator.text.wording import shorten

    runs = {r.run_id: r for r in list_runs(workspace)}
    if run_id in runs:
        return f"run {run_id} has no checkpoints (it ran before checkpoints existed, or without git)"
    near = difflib.get_close_matches(run_id, known, n=5, cutoff=0.5) or known[-5:]
    if not near:
        return f"no run {run_id!r} has checkpoints; there are none in this workspace yet"
    lines = [f"no checkpoints of a run {run_id!r}; the nearest:"]
    for r in near:
        objective = shorten(runs[r].objective, 60) if r in runs else ("an undo" if r.startswith("undo-") else "")
        lines.append(f"  {r}  {objective}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import trio

    from orchestrator.checkpoints.git import CheckpointError
    from orchestrator.policy.workspace_rule import WorkspaceError, check_workspace

    try:
        workspace = check_workspace(args.workspace)
        result = trio.run(_undo, args, workspace)
    except WorkspaceError as exc:
        print(f"reasonix undo: {exc}", file=sys.stderr)
        return 2
    except _Stop as stop:
        print(f"reasonix undo: {stop.message}", file=sys.stderr)
        return stop.code
    except CheckpointError as exc:
        print(f"reasonix undo: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif result["undo_id"] is None:
        print("nothing to undo: those files are already as they were before")
    else:
        kept = f"; kept your versions of {', '.join(result['kept'])}" if result["kept"] else ""
        print(f"undone{kept}. Take this undo back with: {result['redo_command']}")
    return 0
