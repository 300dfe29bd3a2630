"""``reasonix plan "<objective>"``: plan mode. The planner reads (it may not change anything) and proposes a plan; you
review it (approve / revise with feedback / edit / cancel). The approved plan is saved in the run directory
(``.reasonix/runs/<run_id>/plan.r00N.json``); run it later with ``reasonix exec PLAN_FILE``.

The objective is the argument, ``-`` for standard input, or ``--objective-file FILE``.

Exit status (the table is in ``orchestrator/exits.py``): 0 approved and saved; 1 failed; 2 a usage or configuration
problem (also: no terminal to review on and no ``--yes``); 3 paused (budget); 4 cancelled at review; 130 interrupted
by Ctrl-C.
"""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import (
        add_connection_options,
        add_record_option,
        add_review_option,
        add_text_argument,
    )

    add_text_argument(parser, "objective", "what the plan should achieve")
    add_review_option(parser)
    add_connection_options(parser)
    add_record_option(parser)


def run(args: argparse.Namespace) -> int:
    from orchestrator.policy.limits import check_limits

    check_limits(args.budget_usd, args.max_requests, args.max_minutes)  # before the goal machinery is imported
    from orchestrator.cli.goal_command import run_command

    return run_command(args, "plan", "plan")
