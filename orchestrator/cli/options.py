"""The command-line options of ``reasonix goal``, ``plan`` and ``exec`` (standard library only: ``--help`` is fast)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    parser.add_argument("--base-url", metavar="URL", help="DeepSeek API base URL, e.g. a `reasonix emulate` server")
    add_command_options(parser)
    parser.add_argument(
        "--preset",
        choices=("flash", "auto", "pro"),
        help="flash: never escalate; auto (default): escalate single turns to pro when needed; pro: always pro",
    )
    parser.add_argument("--budget-usd", type=float, metavar="X", help="pause the goal when it has cost $X")
    parser.add_argument("--max-requests", type=int, metavar="N", help="pause the goal after N requests to the model")
    parser.add_argument("--max-minutes", type=float, metavar="M", help="pause the goal after M minutes of work")
    parser.add_argument("--json", action="store_true", help="print events as JSON lines, then a summary object")


def add_command_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "full-access"),
        help="how commands are confined (default: [sandbox] mode, workspace-write)",
    )
    parser.add_argument(
        "--permissions",
        choices=("ask", "auto", "read-only"),
        help="ask before commands and writes no rule allows, run them (sandboxed), or refuse changes",
    )


def add_record_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="write a replayable scenario of this run (workspace at the start, every request and reply; never the key)",
    )


def add_review_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="approve the plan without asking (no review)")
