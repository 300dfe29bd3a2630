"""``reasonix exec PLAN_FILE``: execute an approved plan (e.g. one saved by ``reasonix plan``) as a new goal, without
planning or review. The plan file is read by ``plans.loader`` and validated first; an invalid one is refused with every
problem named.

Exit status (the table is in ``orchestrator/exits.py``): 0 complete; 1 failed, blocked, or an invalid plan file;
2 a usage or configuration problem; 3 paused (the resume command is printed); 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import add_connection_options, add_unattended_options

    parser.add_argument("plan_file", type=Path, metavar="PLAN_FILE", help="an approved plan document (JSON)")
    add_connection_options(parser)
    add_unattended_options(parser)


def run(args: argparse.Namespace) -> int:
    from orchestrator.policy.limits import check_limits

    check_limits(args.budget_usd, args.max_requests, args.max_minutes)  # before the goal machinery is imported
    from orchestrator.cli.goal_command import run_command

    return run_command(args, "exec", "exec")
