"""``reasonix chat``: a conversation with no tools, for questions (:mod:`orchestrator.repl.chat`).

In a terminal it is a REPL like ``reasonix code`` (the same input line, status line, ``/cost``, ``/model``,
``/language``, ``/style``); with standard input piped (``echo "what is a monad?" | reasonix chat``) it answers the
text it reads, prints the reply and exits. Its prefix (system prompt, no tools) is its own and fixed, so each question
hits the cache on everything before it.

Exit status: 0 when answered (or the conversation ended); 1 when DeepSeek failed; 2 for a usage or configuration
problem (an empty question, no key).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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


def run(args: argparse.Namespace) -> int:
    import os

    import trio
    from rich.console import Console
    from rich.text import Text

    from orchestrator.build import build_client
    from orchestrator.cli.setup_wizard import offer_setup
    from orchestrator.config.model import load_config
    from orchestrator.errors import ReasonixError
    from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT, check_workspace

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        if interactive:
            offer_setup(workspace, args.base_url, os.environ)
        resolved = load_config(workspace=workspace, flags={"base_url": args.base_url}, env=os.environ)
        client = build_client(resolved, model=getattr(args, "model", None))
    except ReasonixError as exc:
        err.print(Text(f"reasonix chat: {exc}", style="red"))
        return 2
    if not interactive:
        question = sys.stdin.read().strip() if not sys.stdin.isatty() else ""
        if not question:
            err.print(
                Text("reasonix chat: nothing to answer: pipe a question in, or run it in a terminal", style="red")
            )
            return 2
        return trio.run(_answer, resolved, workspace, client, args.model, question)
    return _repl(resolved, workspace, client, args)


async def _answer(resolved: object, workspace: Path, client: object, model: str, question: str) -> int:
    from orchestrator.config.model import ResolvedConfig
    from orchestrator.launch import ConversationLaunch, open_conversation
    from orchestrator.policy.commands import CommandSetup
    from orchestrator.repl.chat import answer_once
    from sessions.permissions import PermissionGate, Rules
    from sessions.sandbox import NoSandbox
    from sessions.wire import DeepSeekClient, DeepSeekError

    assert isinstance(resolved, ResolvedConfig) and isinstance(client, DeepSeekClient)
    nothing = CommandSetup(
        sandbox=NoSandbox(), gate=PermissionGate(Rules.parse([], [], []), mode="read-only"), notice=None
    )
    conversation = open_conversation(
        ConversationLaunch(workspace=workspace, model=model, chat=True),
        env={},
        resolved=resolved,
        commands=nothing,
        client=client,
    )

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    async with client:
        session = conversation.start()
        try:
            await answer_once(session, question, write)
        except DeepSeekError as exc:
            print(f"reasonix chat: DeepSeek: {exc}", file=sys.stderr)
            return 1
        finally:
            conversation.close()
    return 0


def _repl(resolved: object, workspace: Path, client: object, args: argparse.Namespace) -> int:
    import trio
    from rich.console import Console

    from orchestrator.config.model import ResolvedConfig
    from orchestrator.errors import ReasonixError
    from orchestrator.policy.commands import CommandSetup
    from orchestrator.repl.chat import ChatConversation, chat_commands
    from orchestrator.repl.conversation import ReplOptions
    from orchestrator.repl.loop import run_loop
    from sessions.permissions import PermissionGate, Rules
    from sessions.sandbox import NoSandbox
    from sessions.wire import DeepSeekClient

    assert isinstance(resolved, ResolvedConfig) and isinstance(client, DeepSeekClient)
    console = Console(highlight=False, soft_wrap=True)
    nothing = CommandSetup(
        sandbox=NoSandbox(), gate=PermissionGate(Rules.parse([], [], []), mode="read-only"), notice=None
    )
    try:
        conv = ChatConversation(
            workspace=workspace,
            resolved=resolved,
            commands=nothing,
            console=console,
            options=ReplOptions(model=args.model, mode="plan", base_url=args.base_url),
            client=client,
        )
    except ReasonixError as exc:
        console.print(f"reasonix chat: {exc}", style="red")
        return 2
    console.print(f"chat on {conv.model} (no tools) · journal {conv.journal_path} · /help for commands", style="dim")
    trio.run(run_loop, conv, chat_commands())
    return 0
