"""``reasonix goal "<objective>"``: plan → review → execute step by step → verify → re-plan, until the goal is
complete, blocked, paused or out of budget. ``--resume RUN_ID`` continues a paused, interrupted or killed goal from its
run directory; a step that was verified never runs again.

The objective is the argument, ``-`` for standard input, or ``--objective-file FILE`` (``orchestrator/cli/options.py``).

Exit status (the one table is in ``orchestrator/exits.py``): 0 complete; 1 failed, blocked or stopped by a
DeepSeek error (the resume command is printed); 2 a usage or configuration problem; 3 paused (the resume command is
printed); 4 cancelled at review (nothing was executed); 130 interrupted by Ctrl-C (paused; a second Ctrl-C exits at
once).

``--unattended`` never asks anything, waits out DeepSeek's outages and ends in one terminal state with
``summary.md`` in the run directory (:mod:`orchestrator.unattended`).
"""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import (
        add_connection_options,
        add_record_option,
        add_review_option,
        add_text_argument,
        add_unattended_options,
    )

    add_text_argument(parser, "objective", "what the goal should achieve")
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RUN_ID",
        help="continue the goal of this run, or without an id the latest resumable one (raise a limit to go on)",
    )
    add_review_option(parser)
    add_connection_options(parser)
    add_unattended_options(parser)
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        help="json: as --json; stream-json: the events in reasonix -p's stream-json envelope (docs/stream-json.md)",
    )
    add_record_option(parser)


def run(args: argparse.Namespace) -> int:
    from orchestrator.policy.limits import check_limits

    check_limits(args.budget_usd, args.max_requests, args.max_minutes)  # before the goal machinery is imported
    from orchestrator.cli.goal_command import run_command

    return run_command(args, "goal", "goal")
