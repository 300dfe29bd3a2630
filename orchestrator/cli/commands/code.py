"""``reasonix code`` (and bare ``reasonix`` in a terminal): an interactive conversation on the workspace. The
conversation itself lives in :mod:`orchestrator.repl`.

One executor session, built as ``reasonix run`` builds it; each message is a turn streamed with the same tool lines,
diffs and permission prompts. Shift+Tab cycles the mode (ask → auto → plan) without touching the cached prefix;
slash commands (``/help``) run plans and goals inline, show cost and context, undo. ``--continue`` reopens the last
conversation from its journal, ``--resume`` one picked from the workspace's conversations (forks included).

Exit status: 0 when the conversation ends (/exit, Ctrl-D, Ctrl-C twice); 2 without a terminal or for a configuration
problem; 130 for a Ctrl-C pressed twice while a turn unwinds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NOT_A_TERMINAL = (
    "reasonix code is interactive and needs a terminal; for one task without a terminal use "
    'reasonix run "<task>" (or reasonix goal "<objective>")'
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )
    parser.add_argument(
        "--model",
        default="flash",
        metavar="flash|pro|ID",
        help="flash or pro (DeepSeek's), the name of a [[providers]] entry, or a model id",
    )
    parser.add_argument("--base-url", metavar="URL", help="DeepSeek API base URL, e.g. a `reasonix emulate` server")
    parser.add_argument(
        "--mode",
        choices=("ask", "auto", "plan"),
        help="the mode to start in: ask (default), auto, or plan (read-only: the same as --permissions read-only); "
        "Shift+Tab cycles ask → auto → plan",
    )
    parser.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="reopen the last conversation of this workspace from its journal",
    )
    parser.add_argument(
        "--resume",
        dest="pick",
        nargs="?",
        const="",
        default=None,
        metavar="RUN_ID",
        help="reopen a conversation of this workspace: the one named, or one picked from a list",
    )
    from orchestrator.cli.options import add_command_options

    add_command_options(parser)


def run(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"reasonix: {NOT_A_TERMINAL}", file=sys.stderr)
        return 2
    import os

    import trio
    from rich.console import Console
    from rich.text import Text

    from orchestrator.cli.setup_wizard import offer_setup
    from orchestrator.config.model import load_config
    from orchestrator.errors import ReasonixError
    from orchestrator.policy.commands import command_setup
    from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT, check_workspace
    from orchestrator.repl.conversation import Conversation, NothingToContinueError, ReplOptions
    from orchestrator.repl.loop import run_loop
    from orchestrator.repl.modes import Mode
    from orchestrator.ui.approval import terminal_asker
    from sessions.permissions import Question

    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    permissions = getattr(args, "permissions", None)
    mode: Mode = args.mode or {"auto": "auto", "read-only": "plan"}.get(permissions or "", "ask")  # type: ignore[assignment]
    renderer_of: list[Conversation] = []  # the asker shows an edit's diff from the call the renderer has seen start

    def call_args(question: Question) -> dict[str, object] | None:
        return renderer_of[0].renderer.call_args(question.tool, question.subject) if renderer_of else None

    try:
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        offer_setup(workspace, args.base_url, os.environ)
        if args.pick is not None:
            picked = _pick(workspace, args.pick)
            if picked is None:
                return 1
            args.resume, run_id = True, picked
        else:
            run_id = None
        resolved = load_config(workspace=workspace, flags={"base_url": args.base_url}, env=os.environ)
        commands = command_setup(
            resolved,
            workspace,
            sandbox_mode=getattr(args, "sandbox", None),
            permissions="ask" if mode == "ask" else "auto",
            asker=terminal_asker(details=call_args),
        )
        conv = Conversation(
            workspace=workspace,
            resolved=resolved,
            commands=commands,
            console=console,
            options=ReplOptions(
                model=args.model,
                mode=mode,
                resume=args.resume,
                run_id=run_id,
                base_url=args.base_url,
                sandbox=args.sandbox,
            ),
        )
        renderer_of.append(conv)
    except (ReasonixError, NothingToContinueError) as exc:
        err.print(Text(f"reasonix code: {exc}", style="red"))
        return 2
    if commands.notice:
        err.print(Text(f"reasonix code: {commands.notice}", style="red"))
    what = "continuing" if args.resume else "conversation"
    header = Text(f"{what} on {conv.model} · {workspace} · ", style="dim")
    header.append(commands.label, style="red" if commands.danger else "dim")
    header.append(f" · journal {conv.journal_path} · /help for commands", style="dim")
    console.print(header, soft_wrap=True)
    if args.resume:
        from orchestrator.repl.recap import recap

        for line in recap(conv.session.log.messages):
            console.print(line, soft_wrap=True, highlight=False)
    trio.run(run_loop, conv)
    return 0


def _pick(workspace: Path, named: str) -> str | None:
    """The conversation ``--resume`` reopens: ``named`` (an id or a unique prefix), else one picked from the list."""
    from orchestrator.conversation.turn_log import conversations
    from orchestrator.text.wording import shorten

    found = conversations(workspace / ".reasonix" / "runs")
    if not found:
        print("reasonix code: there is no conversation in this workspace yet; start one with `reasonix code`")
        return None
    if named:
        matches = [c.run_id for c in found if c.run_id == named] or [
            c.run_id for c in found if c.run_id.startswith(named)
        ]
        if len(matches) == 1:
            return matches[0]
        print(f"reasonix code: no single conversation {named!r}; pick one:")
    print("conversations of this workspace, the latest first:")
    for i, c in enumerate(found, start=1):
        print(f"  {i:>3}. {c.run_id}  {c.turns} turn{'s' if c.turns != 1 else ''} · {shorten(c.first, 50)}")
        if c.turns > 1:
            print(f"       last: {shorten(c.last, 70)}")
    while True:
        try:
            typed = input(f"reopen which? [1-{len(found)}, Enter: the latest] ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return None
        if not typed:
            return found[0].run_id
        if typed.isdigit() and 1 <= int(typed) <= len(found):
            return found[int(typed) - 1].run_id
        print(f"type a number from 1 to {len(found)}")
