"""``reasonix run "<task>"``: one executor session on one task, streamed to the terminal (or ``--json``).

The terminal shows reasoning (dimmed), the reply, one line per tool call, and after every request a footer with the
turn's and the session's cost and the cache-hit ratio. ``--json`` prints every event as one JSON object per line and
ends with a summary object (status, text, requests, token counts and cost summed over every request). ``--record FILE``
writes the run as a replayable scenario (``reasonix replay FILE``); the API key is never written.

The task is the argument, ``-`` for standard input, or ``--task-file FILE`` (see ``orchestrator/cli/options.py``).

Exit status (the table is in ``orchestrator/exits.py``): 0 when the task finished; 1 when the model or DeepSeek
stopped it (the message says what to do); 2 for a usage or configuration problem; 130 when interrupted (Ctrl-C cancels
cleanly; the run stays journaled under ``<workspace>/.reasonix/runs/``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import (
        add_base_url_option,
        add_json_option,
        add_max_requests_option,
        add_text_argument,
        add_workspace_option,
    )

    add_text_argument(parser, "task", "what the executor should do")
    add_workspace_option(parser)
    parser.add_argument(
        "--model",
        default="flash",
        metavar="flash|pro|ID",
        help="flash or pro (DeepSeek's), the name of a [[providers]] entry, or a model id",
    )
    add_base_url_option(parser)
    add_json_option(parser)
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="refuse every tool call that would change anything (the same as --permissions read-only)",
    )
    from orchestrator.cli.options import add_command_options

    add_command_options(parser)
    add_max_requests_option(parser, "stop after N requests to the model (default: 60)")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="write the run as a replayable scenario (workspace, requests, replies, usage; never the API key)",
    )


def run(args: argparse.Namespace) -> int:
    import os

    from rich.console import Console
    from rich.text import Text

    from orchestrator.cli.options import read_text_argument
    from orchestrator.conversation.engine import ExecutorConversation, run_task, task_summary
    from orchestrator.errors import ReasonixError
    from orchestrator.exits import ExitCode
    from orchestrator.launch import ConversationLaunch, open_conversation
    from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT, check_workspace
    from orchestrator.replay.recorder import Recorder
    from orchestrator.signals import run_interruptible
    from orchestrator.summary import TaskSummary
    from orchestrator.ui.approval import terminal_asker
    from orchestrator.ui.stream import JsonLinesRenderer, TerminalRenderer, summary_line

    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def fail(message: str, code: int) -> int:
        err.print(Text(f"reasonix run: {message}", style="red"))
        return code

    if args.max_requests is not None and args.max_requests < 1:
        return fail("--max-requests must be at least 1", ExitCode.USAGE)
    try:
        task = read_text_argument(args, "task") or ""
    except ReasonixError as exc:
        return fail(str(exc), ExitCode.USAGE)
    if not task.strip():
        return fail('the task is empty; say what to do, e.g. reasonix run "make the tests pass"', ExitCode.USAGE)

    json_out = JsonLinesRenderer(sys.stdout) if args.json else None
    console = Console(highlight=False, soft_wrap=True)
    terminal = None if json_out is not None else TerminalRenderer(console)

    def notice(text: str) -> None:
        err.print(Text(f"reasonix run: {text}", style="yellow"))

    try:
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        interactive = sys.stdin.isatty() and not args.json
        read_only = args.read_only or args.permissions == "read-only"
        recorder = Recorder.start(workspace) if args.record is not None else None
        conversation = open_conversation(
            ConversationLaunch(
                workspace=workspace,
                model=args.model,
                permissions=args.permissions,
                default_permissions="ask" if interactive else "auto",
                read_only=read_only,
                sandbox=args.sandbox,
                base_url=args.base_url,
                max_requests=args.max_requests,
                checkpoints=not read_only,
            ),
            env=os.environ,
            on_event=json_out if json_out is not None else terminal,
            asker=terminal_asker() if interactive else None,
            on_notice=notice,
            transport=recorder.transport() if recorder is not None else None,
        )
    except ReasonixError as exc:
        return fail(str(exc), ExitCode.USAGE)
    commands, client, resolved = conversation.commands, conversation.client, conversation.resolved

    if commands.notice:
        err.print(Text(f"reasonix run: {commands.notice}", style="red"))
    problem: list[str] = []
    started: list[ExecutorConversation] = []

    async def work() -> TaskSummary | None:
        """The session is built once the MCP servers are up: their tools are in the frozen prefix."""
        try:
            async with conversation.opened():
                started.append(conversation)
                if terminal is not None:
                    mode = " · read-only" if read_only else ""
                    header = Text(f"executor on {conversation.session.settings.model}{mode} · ", style="dim")
                    header.append(commands.label, style="red" if commands.danger else "dim")
                    header.append(f" · journal {conversation.journal_path}", style="dim")
                    console.print(header, soft_wrap=True)
                return await run_task(conversation, task)
        except ReasonixError as exc:
            if started:
                raise
            problem.append(str(exc))
            return None

    outcome = run_interruptible(work, resource=client)
    if problem:
        return fail(problem[0], ExitCode.USAGE)
    if outcome is None:
        if not started:
            err.print(Text("reasonix run: interrupted before the session started", style="yellow"))
            return ExitCode.INTERRUPTED
        outcome = task_summary(started[0], "cancelled")
    summary = outcome
    if recorder is not None:
        from orchestrator.replay.recorder import recording_line
        from scenarios import ScenarioSettings

        config = resolved.config
        settings = ScenarioSettings(
            preset="pro" if args.model == "pro" else "flash",
            max_requests=args.max_requests,
            thinking=config.thinking,
            reasoning_effort=config.reasoning_effort,
        )
        written = recorder.write(args.record, command="run", objective=task, status=summary.status, settings=settings)
        err.print(Text(recording_line(written, len(recorder.exchanges), args.record), style="dim"), soft_wrap=True)
    if json_out is not None:
        json_out.write(summary.model_dump(mode="json"))
    else:
        assert terminal is not None
        terminal.end_line()
        console.print(
            summary_line(summary.status, summary.requests, summary.cost_usd, summary.cache_hit_ratio or 0.0),
            soft_wrap=True,
        )
    advice = summary.advice()
    if summary.ok:
        return ExitCode.OK
    assert advice is not None
    if summary.status == "cancelled":
        err.print(Text(f"reasonix run: {advice}", style="yellow"))
        return ExitCode.INTERRUPTED
    return fail(advice, ExitCode.FAILED)
