"""Claude Code's flags on ``reasonix -p``: what the Claude Agent SDKs pass, and what each maps to (docs/stream-json.md,
"Claude Code's flags"). Standard library only: ``reasonix --help`` imports it."""

from __future__ import annotations

import argparse

PERMISSION_MODES = {
    "ask": "ask",
    "auto": "auto",
    "read-only": "read-only",
    "plan": "read-only",
    "default": "ask",
    "acceptEdits": "auto",
    "bypassPermissions": "auto",
    "dontAsk": "ask",
}
"""``--permission-mode``: Reasonix's modes, and Claude Code's names for the same ideas: ``default`` is ask (the
caller is asked when ``--permission-prompt-tool stdio`` is given; with no one to ask, a call that needs approval is
refused with the reason), ``dontAsk`` is ask with nobody to ask (refused), ``plan`` is read-only,
``bypassPermissions`` is auto; ``acceptEdits`` is still auto here (edits allowed, and commands run in the sandbox
unasked). Without the flag: auto, or ask when ``--permission-prompt-tool stdio`` can be asked."""

IGNORED_VALUE_FLAGS = (
    "--setting-sources",
    "--fallback-model",
    "--betas",
    "--session-id",
    "--settings",
    "--thinking",
    "--max-thinking-tokens",
    "--thinking-display",
    "--effort",
    "--json-schema",
    "--task-budget",
    "--resume-session-at",
    "--resume-drops-turn",
    "--agents",
)
"""Claude Code flags the SDKs may pass that ``reasonix -p`` accepts and does not honour: named in the ``init`` line's
``ignored`` (docs/stream-json.md says why for each)."""
CLAUDE_MCP_STATES = {
    "stopped": "pending",
    "ready": "connected",
    "restarted": "connected",
    "failed": "failed",
    "down": "failed",
}
"""An MCP server's state in Claude Code's words (``connected``, ``failed``, ``pending``), for the ``init`` line."""
IGNORED_REPEATED_FLAGS = ("--add-dir", "--plugin-dir")
IGNORED_SWITCHES = ("--include-hook-events", "--session-mirror")


def add_claude_flags(parser: argparse.ArgumentParser) -> None:
    """Claude Code's flags, in a group of their own."""
    claude = parser.add_argument_group(
        "Claude Code's flags", "what the Claude Agent SDKs pass (docs/stream-json.md: what each maps to)"
    )
    claude.add_argument("--verbose", action="store_true", help="accepted: stream-json is always complete")
    claude.add_argument("--system-prompt", metavar="TEXT", help="only empty: the system prompt is the cached prefix")
    claude.add_argument("--system-prompt-file", metavar="FILE", help="refused: the system prompt is the cached prefix")
    claude.add_argument("--append-system-prompt", metavar="TEXT", help="added to the tail of this run's first message")
    claude.add_argument(
        "--include-partial-messages", action="store_true", help="stream-json: stream_event lines as the reply streams"
    )
    claude.add_argument(
        "--allowedTools",
        dest="pre_approved",
        action="append",
        default=[],
        metavar="NAMES",
        help="these tools run without asking (Claude Code's names map to Reasonix's: Read is read_file …)",
    )
    claude.add_argument(
        "--disallowedTools", "--disallowed-tools", dest="disallowed", action="append", default=[], metavar="NAMES"
    )
    claude.add_argument("--tools", metavar="NAMES", help="only these tools may run (default: all)")
    claude.add_argument(
        "--permission-prompt-tool", metavar="stdio", help="stdio: ask the caller (can_use_tool control requests)"
    )
    claude.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="JSON|FILE",
        help='MCP servers for this run, {"mcpServers": {...}} (as .mcp.json), beside the configured ones',
    )
    claude.add_argument(
        "--fork-session", action="store_true", help="with --resume: go on under a new session_id, the original kept"
    )
    claude.add_argument(
        "--strict-mcp-config", action="store_true", help="only the servers of --mcp-config, none of the configured"
    )
    for flag in IGNORED_VALUE_FLAGS:
        claude.add_argument(flag, dest=_dest(flag), metavar="VALUE", help=argparse.SUPPRESS)
    for flag in IGNORED_REPEATED_FLAGS:
        claude.add_argument(flag, dest=_dest(flag), action="append", metavar="VALUE", help=argparse.SUPPRESS)
    for flag in IGNORED_SWITCHES:
        claude.add_argument(flag, dest=_dest(flag), action="store_true", help=argparse.SUPPRESS)


def _dest(flag: str) -> str:
    return "ignored_" + flag.removeprefix("--").replace("-", "_")


def ignored_flags(args: argparse.Namespace) -> list[str]:
    """The Claude Code flags given that this run does not honour."""
    flags = (*IGNORED_VALUE_FLAGS, *IGNORED_REPEATED_FLAGS, *IGNORED_SWITCHES)
    given = [flag for flag in flags if getattr(args, _dest(flag)) not in (None, False)]  # an empty value counts
    if args.permission_prompt_tool not in (None, "stdio"):
        given.append("--permission-prompt-tool")
    return given
