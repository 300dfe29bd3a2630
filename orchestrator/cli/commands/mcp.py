"""``reasonix mcp list``: each configured MCP server (``[mcp.servers]`` and the workspace's ``.mcp.json``), whether it
starts, and its tools as the model sees them, read-only ones marked (those the planner may call too).

Tools are read when a session starts; a server whose tools change is read again at the next session, never in the
middle of one. Exit status: 0 when every server started, 1 when one did not, 2 for a configuration problem.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NONE_CONFIGURED = (
    "no MCP servers configured: add a [mcp.servers.NAME] table to reasonix.toml (or your own config), "
    "or keep a .mcp.json"
)
REREAD = "tools are read when a session starts; a server whose tools change is read again at the next session"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="list")
    listing = sub.add_parser("list", help="each server, its state and its tools (read-only ones marked)")
    listing.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    listing.add_argument("--json", action="store_true", help="a JSON array: one object per server ([] for none)")


def run(args: argparse.Namespace) -> int:
    import os

    import trio
    from rich.console import Console
    from rich.text import Text

    from orchestrator.config.model import load_config
    from orchestrator.errors import ReasonixError
    from orchestrator.mcp.hub import probe
    from orchestrator.policy.workspace_rule import check_workspace

    console = Console(highlight=False, soft_wrap=True)
    if args.mcp_command != "list":
        console.print("usage: reasonix mcp list [--workspace DIR] [--json]")
        return 2
    try:
        workspace = check_workspace(args.workspace)
        resolved = load_config(workspace=workspace, env=os.environ)
    except ReasonixError as exc:
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(f"reasonix mcp: {exc}", style="red"))
        return 2
    config = resolved.config.mcp
    if not config.servers:
        if args.json:
            print("[]")
        else:
            console.print(Text(NONE_CONFIGURED))
        return 0
    reports = trio.run(probe, config, workspace)
    listed = []
    for report in reports:
        if args.json:
            listed.append(
                {
                    "server": report.name,
                    "transport": report.transport,
                    "state": report.state,
                    "error": report.error or None,
                    "source": resolved.sources.get(f"mcp.servers.{report.name}.command")
                    or resolved.sources.get(f"mcp.servers.{report.name}.url"),
                    "tools": [{"name": name, "read_only": ro} for name, ro in report.tools],
                }
            )
            continue
        line = Text(f"{report.name} ", style="bold")
        line.append(f"({report.transport}) ", style="dim")
        if report.state == "ready":
            line.append(f"ready · {len(report.tools)} tools", style="green")
        else:
            line.append(f"{report.state}: {report.error}", style="red")
        console.print(line)
        for name, read_only in report.tools:
            tool = Text(f"  {name}")
            if read_only:
                tool.append("  read-only", style="cyan")
            console.print(tool)
    if args.json:
        print(json.dumps(listed, indent=2))
    else:
        console.print(Text(REREAD, style="dim"))
    return 0 if all(r.state == "ready" for r in reports) else 1
