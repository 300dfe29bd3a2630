"""``reasonix checkpoints [--run ID]``: the checkpoints of the workspace, run by run and step by step, with the files
each step changed and whether it was undone. ``--json`` for the ledger entries themselves.

Exit status: 0; 1 an unknown run; 2 a usage problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.checkpoints.ledger import Checkpoint, FileChange

MAX_FILES_SHOWN = 8


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", metavar="RUN_ID", help="only this run (a unique prefix will do)")
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    parser.add_argument("--json", action="store_true", help="print the checkpoints as JSON")


def _files(changes: tuple[FileChange, ...], total: int) -> str:
    shown = [f"{c.status} {c.path}" for c in changes[:MAX_FILES_SHOWN]]
    more = total - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "") if shown else "no files changed"


def run(args: argparse.Namespace) -> int:
    from orchestrator.checkpoints.git import ShadowRepo
    from orchestrator.checkpoints.ledger import Ledger, run_ids, step_runs, undone_steps
    from orchestrator.policy.workspace_rule import WorkspaceError, check_workspace
    from orchestrator.text.wording import shorten

    try:
        workspace = check_workspace(args.workspace)
    except WorkspaceError as exc:
        print(f"reasonix checkpoints: {exc}", file=sys.stderr)
        return 2
    entries = Ledger(workspace).read()
    runs = run_ids(entries)
    if args.run is not None:
        chosen = [r for r in runs if r == args.run] or [r for r in runs if r.startswith(args.run)]
        if len(chosen) > 1:
            listed = "\n".join(f"  {r}" for r in chosen)
            print(
                f"reasonix checkpoints: {args.run!r} is ambiguous: it starts {len(chosen)} runs' ids:\n{listed}",
                file=sys.stderr,
            )
            return 1
        if len(chosen) != 1:
            import difflib

            near = difflib.get_close_matches(args.run, runs, n=5, cutoff=0.5) or runs[-5:]
            listed = "; runs with checkpoints: " + ", ".join(near) if near else "; there are none yet"
            print(f"reasonix checkpoints: no checkpoints of a run {args.run!r}{listed}", file=sys.stderr)
            return 1
        runs = chosen
    undone = undone_steps(entries)
    if args.json:
        out = [
            {**cp.model_dump(mode="json"), "undone_by": undone.get((cp.run_id, cp.seq))}
            for cp in entries
            if cp.run_id in runs
        ]
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if not runs:
        where = ShadowRepo(workspace).store_dir
        print(
            f"no checkpoints yet: a turn that writes takes one, and a goal one before each step (they live in {where})"
        )
        return 0
    for run_id in reversed(runs):  # newest first, like `reasonix runs`
        steps = step_runs(entries, run_id)
        print(f"run {run_id}  ({steps[0].before.at[:19].replace('T', ' ')} UTC)" if steps else f"run {run_id}")
        for sr in steps:
            by = undone.get((run_id, sr.before.seq))
            state = f"  [undone by {by}]" if by else ("  [cut off: no checkpoint after it]" if sr.after is None else "")
            retries = f" · {len(sr.retries)} retried from its checkpoint" if sr.retries else ""
            files = _files(sr.changes, sr.after.changes_total) if sr.after is not None else "–"
            print(f"  #{sr.before.seq:<4} {sr.before.step_id:<6} {shorten(files, 110)}{retries}{state}")
            if sr.after is not None and sr.after.note:
                print(f"         {shorten(sr.after.note, 110)}")
            skipped = sorted({p for cp in (sr.before, sr.after) if cp is not None for p in cp.skipped})
            if skipped:
                print(f"         not checkpointed (too large): {shorten(', '.join(skipped), 100)}")
    print("\n" + _undo_hint(entries, undone))
    return 0


def _undo_hint(entries: list[Checkpoint], undone: dict[tuple[str, int], str]) -> str:
    """What `reasonix undo` would take back now, as it picks (the latest run's last step not yet undone)."""
    from orchestrator.checkpoints.ledger import UNDO_PREFIX, run_ids, step_runs

    runs = [r for r in run_ids(entries) if not r.startswith(UNDO_PREFIX)]
    live = [r for r in runs if any((r, sr.before.seq) not in undone for sr in step_runs(entries, r))]
    if not runs:
        return "nothing to take back: only undos are recorded here"
    latest = max(runs, key=lambda r: max(cp.seq for cp in entries if cp.run_id == r))
    if latest in live:
        return "take back the last step with: reasonix undo   (a chosen one: reasonix undo --run ID --step S)"
    if live:
        return f"every step of the latest run is undone; the run before it: reasonix undo --run {live[-1]}"
    return "every step is undone: there is nothing left to take back (each undo printed the command that redoes it)"
