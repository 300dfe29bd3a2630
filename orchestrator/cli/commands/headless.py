"""``reasonix -p PROMPT`` (also ``reasonix print PROMPT``): one executor task without a terminal, as ``reasonix run``
does, for scripts and CI. ``-p -`` reads the prompt from standard input (so does ``-p`` alone when standard input is
not a terminal).

``--output-format text`` prints the final answer, ``json`` one ``result`` object at the end, ``stream-json`` one JSON
object a line as things happen (docs/stream-json.md; the schema is docs/stream-json.schema.json). ``--input-format
stream-json`` reads user messages from standard input, one JSON object a line, each a turn of one conversation.
``--resume ID`` continues the conversation whose ``session_id`` a result gave, ``--continue`` the workspace's latest.

Exit status (``orchestrator/cli/exits.py``): 0 the task finished; 1 DeepSeek or the model stopped it; 2 a usage or
configuration problem; 3 a limit was reached (``--max-turns``, ``--max-budget-usd``: continue with ``--resume ID``);
130 Ctrl-C; 141 standard output closed early (``reasonix -p … | head -1``).
"""

from __future__ import annotations

import argparse
import sys

PERMISSION_MODES = {
    "ask": "ask",
    "auto": "auto",
    "read-only": "read-only",
    "plan": "read-only",
    "default": "ask",
    "acceptEdits": "auto",
    "bypassPermissions": "auto",
}
"""``--permission-mode``: Reasonix's modes, and Claude Code's names for the same ideas: ``default`` is ask (with no
one to ask, a call that needs approval is refused with the reason), ``plan`` is read-only, ``bypassPermissions`` is
auto; ``acceptEdits`` is still auto here (edits allowed, and commands run in the sandbox unasked)."""


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import add_base_url_option, add_text_argument, add_workspace_option

    add_text_argument(parser, "prompt", "what the executor should do")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text")
    parser.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: user messages on standard input, one JSON object a line, each a turn",
    )
    parser.add_argument("--resume", metavar="ID", help="continue the conversation with this session_id")
    parser.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue the workspace's latest conversation"
    )
    parser.add_argument("--max-turns", type=int, metavar="N", help="at most N requests to the model")
    parser.add_argument("--max-budget-usd", type=float, metavar="X", help="send no request that could pass $X")
    parser.add_argument(
        "--allowed-tools",
        action="append",
        default=[],
        metavar="NAMES",
        help="only these tools may run (comma or space separated; others are refused, the tool list is unchanged)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=sorted(PERMISSION_MODES),
        help="ask (a call no rule allows is refused: no one to ask), auto (default), read-only or plan; "
        "Claude Code's default means ask, acceptEdits and bypassPermissions auto",
    )
    parser.add_argument("--model", default="flash", metavar="flash|pro|ID")
    add_workspace_option(parser)
    add_base_url_option(parser)
    parser.add_argument("--sandbox", choices=("workspace-write", "read-only", "full-access"))


def run(args: argparse.Namespace) -> int:
    import os

    import trio

    from orchestrator.build import check_workspace
    from orchestrator.cli.options import read_text_argument
    from orchestrator.conversation.limits import parse_allowed
    from orchestrator.errors import ReasonixError
    from orchestrator.exits import ExitCode, silence_stdout
    from orchestrator.headless.conversation import (
        POINTER,
        HeadlessConversation,
        HeadlessOptions,
        NoConversationError,
        check_resume,
        last_conversation,
    )
    from orchestrator.headless.events import ResultLine
    from orchestrator.headless.output import Output, parse_input_line
    from orchestrator.launch import ConversationLaunch, open_conversation
    from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT
    from orchestrator.signals import run_interruptible

    def fail(message: str, code: int) -> int:
        print(f"reasonix -p: {message}", file=sys.stderr, flush=True)
        return code

    for flag, value in (("--max-turns", args.max_turns), ("--max-budget-usd", args.max_budget_usd)):
        if value is not None and value <= 0:
            return fail(f"{flag} must be above 0", ExitCode.USAGE)
    if args.resume and args.continue_:
        return fail("give --resume ID or --continue, not both", ExitCode.USAGE)
    streamed = args.input_format == "stream-json"
    prompt = ""
    if not streamed:
        if args.prompt is None and args.prompt_file is None and not sys.stdin.isatty():
            args.prompt = "-"
        try:
            prompt = read_text_argument(args, "prompt") or ""
        except ReasonixError as exc:
            return fail(str(exc), ExitCode.USAGE)
        if not prompt.strip():
            return fail('the prompt is empty; say what to do, e.g. reasonix -p "explain src/app.py"', ExitCode.USAGE)
    elif args.prompt not in (None, "-"):
        return fail("--input-format stream-json reads the messages from standard input; drop the prompt", 2)

    mode = PERMISSION_MODES[args.permission_mode or "auto"]

    def notice(text: str) -> None:
        print(f"reasonix -p: {text}", file=sys.stderr)

    scope = trio.CancelScope()
    out = Output(sys.stdout, args.output_format, on_closed=scope.cancel)
    try:
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        resume = args.resume
        if args.continue_:
            resume = last_conversation(workspace)
            if resume is None:
                raise NoConversationError("there is no earlier headless conversation here; drop --continue")
        if resume is not None:
            check_resume(workspace, resume)
        conversation = open_conversation(
            ConversationLaunch(
                workspace=workspace,
                model=args.model,
                permissions=mode,
                read_only=mode == "read-only",
                sandbox=args.sandbox,
                base_url=args.base_url,
                resume=resume,
                pointer=POINTER,
                max_budget_usd=args.max_budget_usd,
                allowed_tools=parse_allowed(args.allowed_tools) if args.allowed_tools else None,
            ),
            env=os.environ,
            on_notice=notice,
        )
    except ReasonixError as exc:
        return fail(str(exc), ExitCode.USAGE)
    client, commands = conversation.client, conversation.commands
    if commands.notice:
        print(f"reasonix -p: {commands.notice}", file=sys.stderr)

    options = HeadlessOptions(max_turns=args.max_turns, permission_mode=mode)
    started: list[HeadlessConversation] = []
    cancelled: list[ResultLine] = []
    problem: list[str] = []

    prompt_sent = False
    count = 0

    async def messages() -> str | None:
        """The next user message, or None when there is none left (the prompt was sent, standard input ended)."""
        nonlocal prompt_sent, count
        if not streamed:
            if prompt_sent:
                return None
            prompt_sent = True
            return prompt
        while True:
            raw = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
            if not raw:
                return None
            count += 1
            text = parse_input_line(raw, count)
            if text is not None:
                return text

    async def work() -> bool:
        with scope:
            try:
                async with conversation.opened():
                    headless = HeadlessConversation(conversation, on_event=out, options=options)
                    started.append(headless)
                    out(headless.init_event())
                    try:
                        while (text := await messages()) is not None:
                            await headless.send(text)
                    finally:
                        if headless.turn_running:  # cancelled mid-turn (Ctrl-C, a closed pipe): say what was spent
                            hint = f"interrupted; continue with reasonix -p --resume {headless.session_id}"
                            cancelled.append(headless.result("cancelled", hint))
            except ReasonixError as exc:
                if started:
                    raise
                problem.append(str(exc))
                return True
        return not scope.cancelled_caught

    finished = run_interruptible(work, resource=client)
    if problem:
        return fail(problem[0], ExitCode.USAGE)
    if out.closed:
        silence_stdout()
        return ExitCode.BROKEN_PIPE
    if not started:
        return fail("interrupted before the conversation started", ExitCode.INTERRUPTED)
    headless = started[0]
    result = out.last_result
    if cancelled or result is None or not finished:
        hint = f"interrupted; continue with reasonix -p --resume {headless.session_id}"
        result = cancelled[0] if cancelled else headless.result("cancelled", hint)
        out(result)
    out.finish()
    if result.subtype == "success":
        return ExitCode.OK
    hint = f" (session {headless.session_id})"
    if result.status == "cancelled":
        return fail(result.result, ExitCode.INTERRUPTED)
    if result.subtype in ("error_max_turns", "error_max_budget_usd"):
        return fail(f"{result.result}{hint}", ExitCode.PAUSED)
    return fail(f"{result.result}{hint}", ExitCode.FAILED)
