"""``reasonix batch FILE``: many goals, each in its own copy of its workspace (never your checkout), ``--jobs`` at a
time on this machine, or on a Ray cluster with ``--ray auto|ADDRESS`` (``pip install 'reasonix[ray]'``).

FILE holds one goal a line (JSON: ``workspace``, ``objective``, optional ``id``, ``ref``, ``preset``, ``budget_usd``,
``max_requests``, ``max_minutes``, ``review = "off"``) or ``[[goals]]`` tables (``.toml``). A workspace is a local
directory (its committed ``HEAD``, or ``ref``) or a git URL. The batch directory (``--dir``, default ``FILE``'s name
with ``.batch``) holds each goal's copy and ``results.jsonl`` (a line per goal: status, cost, requests, cache hit
ratio, wall time, diff, run directory, node). ``--budget-usd`` caps the whole batch: every request of every goal asks
one ledger first; when it is reached every goal pauses, resumable. ``--resume`` runs the goals that did not finish.

Exit status: 0 every goal complete; 1 a goal failed, was blocked or could not run; 2 a usage problem; 3 a goal is
paused (a budget); 130 interrupted by Ctrl-C (the running goals are paused; ``--resume`` goes on).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="the goals: JSON lines, or .toml with [[goals]]")
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=2,
        metavar="N",
        help="goals at once here (default: 2; with --ray, Ray decides: a goal per CPU)",
    )
    parser.add_argument("--resume", action="store_true", help="run only the goals an earlier run did not finish")
    parser.add_argument("--budget-usd", type=float, metavar="X", help="pause every goal when the batch has cost $X")
    parser.add_argument("--dir", type=Path, metavar="DIR", help="the batch directory (default: FILE.batch beside it)")
    parser.add_argument("--output", type=Path, metavar="FILE", help="the results JSONL (default: DIR/results.jsonl)")
    parser.add_argument("--base-url", metavar="URL", help="the DeepSeek API endpoint (e.g. a local `reasonix emulate`)")
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each goal as a task on a Ray cluster: auto (the local cluster, or a new one) or its address",
    )
    parser.add_argument(
        "--retries", type=int, default=2, metavar="N", help="on Ray: retry a goal whose node died N times (default: 2)"
    )


def _say(text: str) -> None:
    import sys

    print(f"reasonix batch: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    import os

    import trio

    from orchestrator.batch.display import BatchDisplay, summary_table
    from orchestrator.batch.driver import BatchRun
    from orchestrator.batch.spec import BatchError, load_goals
    from orchestrator.exits import ExitCode
    from orchestrator.signals import watch_interrupts

    if args.jobs < 1:
        _say("--jobs must be at least 1")
        return ExitCode.USAGE
    try:
        goals = load_goals(args.file)
        batch_dir: Path = (args.dir or args.file.resolve().with_suffix(".batch")).absolute()
        batch = BatchRun.open(
            goals,
            batch_dir,
            resume=args.resume,
            budget_usd=args.budget_usd,
            env=os.environ,
            base_url=args.base_url,
            results_path=args.output,
        )
    except BatchError as exc:
        _say(str(exc))
        return ExitCode.USAGE
    pending = batch.pending
    skipped = len(goals) - len(pending)
    display = BatchDisplay(len(pending))
    batch.on_progress, batch.on_result = display.progress, display.result
    if skipped:
        display.note(f"resuming: {skipped} of {len(goals)} goals already finished, {len(pending)} to run")
    interrupted: list[bool] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            scope = trio.CancelScope()
            nursery.start_soon(lambda: watch_interrupts(scope, on_first=lambda: interrupted.append(True)))
            with scope:
                if args.ray:
                    from orchestrator.batch.ray_engine import run_on_ray

                    await run_on_ray(batch, address=args.ray, retries=args.retries, on_joined=display.note)
                else:
                    from orchestrator.batch.local import run_local

                    await run_local(batch, jobs=args.jobs)
            nursery.cancel_scope.cancel()

    try:
        with display:
            trio.run(main)
    except BatchError as exc:
        _say(str(exc))
        return ExitCode.USAGE
    results = batch.all_results()
    display.console.print(summary_table(results))
    display.note(f"results: {batch.results.path}")
    if interrupted:
        _say(f"interrupted: the running goals are paused; go on with: reasonix batch {args.file} --resume")
        return ExitCode.INTERRUPTED
    statuses = {r.status for r in results}
    if statuses & {"failed", "blocked", "error", "cancelled"}:
        return ExitCode.FAILED
    if "paused" in statuses:
        why = batch.ledger.refusal or "a goal's own limit"
        _say(f"paused ({why}); go on with: reasonix batch {args.file} --resume [--budget-usd MORE]")
        return ExitCode.PAUSED
    return ExitCode.OK
