"""``reasonix hooks list``: every configured hook (``[[hooks]]`` in your config, ``reasonix.toml`` and
``reasonix.local.toml``), in the order they run, with the file each comes from; ``--json`` for a script.

A workspace file's hooks count only once you trust it (``reasonix trust``): until then this command, like every
other, names the file and refuses it. Exit status: 0, or 2 for a configuration problem.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NONE_CONFIGURED = (
    "no hooks configured: add a [[hooks]] table (event, matcher, command, timeout_s) to reasonix.toml or your own "
    "config"
)


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="hooks_command", metavar="list")
    listing = sub.add_parser("list", help="each hook, its event and matcher, and the file it comes from")
    listing.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    listing.add_argument("--json", action="store_true", help="a JSON array: one object per hook ([] for none)")


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    from orchestrator.config.model import load_config
    from orchestrator.errors import ReasonixError
    from orchestrator.policy.workspace_rule import check_workspace
    from orchestrator.text.safe_text import neutralise

    if args.hooks_command != "list":
        print("usage: reasonix hooks list [--workspace DIR] [--json]")
        return 2
    try:
        workspace = check_workspace(args.workspace)
        resolved = load_config(workspace=workspace, env=os.environ)
    except ReasonixError as exc:
        print(f"reasonix hooks: {exc}", file=sys.stderr)
        return 2
    listed = [
        {
            "event": hook.event,
            "matcher": hook.matcher,
            "command": hook.command,
            "timeout_s": hook.timeout_s,
            "sandbox": hook.sandbox,
            "source": resolved.sources.get(f"hooks.{i}", "?"),
        }
        for i, hook in enumerate(resolved.config.hooks)
    ]
    if args.json:
        print(json.dumps(listed, indent=2))
        return 0
    if not listed:
        print(NONE_CONFIGURED)
        return 0
    for item in listed:
        matcher = f" [{item['matcher']}]" if item["matcher"] else ""
        sandbox = "" if item["sandbox"] else " · unsandboxed"
        print(neutralise(f"{item['event']}{matcher}: {item['command']}  ({item['timeout_s']:g}s{sandbox})"))
        print(neutralise(f"    from {item['source']}"))
    return 0
