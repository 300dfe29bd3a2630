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


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.claude_flags import PERMISSION_MODES, add_claude_flags
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
        "Claude Code's default and dontAsk mean ask, acceptEdits and bypassPermissions auto",
    )
    parser.add_argument("--model", default="flash", metavar="flash|pro|ID")
    add_workspace_option(parser)
    add_base_url_option(parser)
    parser.add_argument("--sandbox", choices=("workspace-write", "read-only", "full-access"))
    add_claude_flags(parser)


def sole(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception a nursery wrapped (its callers catch it by its type), else the group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def run(args: argparse.Namespace) -> int:
    import os
    from functools import partial

    import trio

    from orchestrator.build import resolve_model
    from orchestrator.cli.claude_flags import CLAUDE_MCP_STATES, PERMISSION_MODES, ignored_flags
    from orchestrator.cli.options import read_text_argument
    from orchestrator.config.hooks import CLAUDE_EVENT_NAMES
    from orchestrator.config.mcp import caller_servers
    from orchestrator.conversation.limits import CLAUDE_TOOL_NAMES, ToolRules, claude_tool_names, parse_allowed
    from orchestrator.errors import ReasonixError
    from orchestrator.exits import ExitCode, silence_stdout
    from orchestrator.headless.control import (
        CallNoted,
        ControlChannel,
        ControlHandlers,
        ControlRefusedError,
        HookCallbacks,
        PermissionPrompt,
        registered_hooks,
    )
    from orchestrator.headless.conversation import (
        POINTER,
        HeadlessConversation,
        HeadlessOptions,
        NoConversationError,
        check_resume,
        fork_conversation,
        last_conversation,
    )
    from orchestrator.headless.events import McpServerInfo, ResultLine, StreamJsonEvent, SystemInit
    from orchestrator.headless.output import Output
    from orchestrator.hooks.hooks import FAILURE_EVENT
    from orchestrator.launch import ConversationLaunch, open_conversation
    from orchestrator.mcp.caller import caller_transport
    from orchestrator.mcp.hub import ServerReport
    from orchestrator.policy.workspace_rule import CD_INTO_A_PROJECT, check_workspace
    from orchestrator.signals import run_interruptible
    from sessions.accounting import PriceError
    from sessions.prompt import TailBlock
    from sessions.tools import Gate

    def fail(message: str, code: int) -> int:
        print(f"reasonix -p: {message}", file=sys.stderr, flush=True)
        return code

    for flag, value in (("--max-turns", args.max_turns), ("--max-budget-usd", args.max_budget_usd)):
        if value is not None and value <= 0:
            return fail(f"{flag} must be above 0", ExitCode.USAGE)
    if args.resume and args.continue_:
        return fail("give --resume ID or --continue, not both", ExitCode.USAGE)
    if args.system_prompt or args.system_prompt_file:
        return fail(
            "reasonix keeps its own system prompt: it is the cached prefix every request shares; give your text with "
            "--append-system-prompt (it goes to the tail of the first message) or drop --system-prompt",
            ExitCode.USAGE,
        )
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
    stdio_prompt = args.permission_prompt_tool == "stdio"
    if stdio_prompt and not streamed:
        return fail("--permission-prompt-tool stdio needs --input-format stream-json (the answers come there)", 2)

    mode = PERMISSION_MODES[args.permission_mode] if args.permission_mode else "ask" if stdio_prompt else "auto"
    allowed = parse_allowed(args.allowed_tools) if args.allowed_tools else None
    if args.tools is not None and args.tools != "default":
        only = claude_tool_names([args.tools])[0]
        allowed = only if allowed is None else allowed & only
    pre_approved, _ = claude_tool_names(args.pre_approved)
    disallowed = frozenset().union(*claude_tool_names(args.disallowed))
    ignored = ignored_flags(args)
    scope = trio.CancelScope()
    prompter: list[PermissionPrompt] = []

    def reports() -> list[ServerReport]:
        hub = conversation.mcp
        return hub.reports() if hub is not None else []

    def mcp_listing() -> list[dict[str, str]]:
        """Every server of this run with its state in Claude Code's words; the SDK's in-process ones as failed."""
        listed = [
            {"name": r.name, "status": CLAUDE_MCP_STATES.get(r.state, r.state), "error": r.error or ""}
            for r in reports()
        ]
        unrun = "served inside the Claude Agent SDK (type sdk): reachable only with --input-format stream-json"
        running = {r.name for r in reports()}
        return listed + [{"name": n, "status": "failed", "error": unrun} for n in sdk_servers if n not in running]

    def edit(event: StreamJsonEvent) -> StreamJsonEvent:
        if isinstance(event, SystemInit):
            servers = [McpServerInfo(name=s["name"], status=s["status"]) for s in mcp_listing()]
            return event.model_copy(update={"ignored": ignored, "mcp_servers": servers})
        if prompter:
            prompter[0].observe(event)
            if isinstance(event, ResultLine):
                return event.model_copy(update={"permission_denials": prompter[0].take_denials()})
        return event

    out = Output(
        sys.stdout, args.output_format, on_closed=scope.cancel, partial=args.include_partial_messages, edit=edit
    )
    running: list[trio.CancelScope] = []

    def interrupt() -> None:
        for turn in running:
            turn.cancel()

    def set_permission_mode(name: str) -> None:
        if name not in PERMISSION_MODES:
            raise ControlRefusedError(f"unknown permission mode {name!r}; use one of {', '.join(PERMISSION_MODES)}")
        commands.gate.mode = PERMISSION_MODES[name]  # type: ignore[assignment]
        if commands.hooks is not None:
            commands.hooks.permission_mode = name

    def set_model(name: str | None) -> None:
        if not started:
            raise ControlRefusedError("the conversation has not started yet; send set_model after initialize")
        if name is None or name == "default":
            started[0].model = None
            return
        model = resolve_model(conversation.resolved.config, name)
        try:
            conversation.resolved.config.price_book().family_of(model)
        except PriceError as exc:  # it names the models there are
            raise ControlRefusedError(f"set_model {name!r}: {exc}") from None
        started[0].model = model

    def halt(reason: str) -> None:
        """A hook answered ``continue: false``: the running turn stops, its result says why."""
        halted.append(reason)
        interrupt()

    def initialize(request: dict[str, object]) -> dict[str, object]:
        model = started[0].session.settings.model if started else args.model
        body: dict[str, object] = {
            "commands": [],
            "agents": [],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": model, "displayName": model, "description": "DeepSeek, through Reasonix"}],
            "account": {},
            "pid": os.getpid(),
        }
        hooks = commands.hooks
        if request.get("hooks") and hooks is not None:
            aliases: dict[str, tuple[str, ...]] = {}
            for claude_name, ours in CLAUDE_TOOL_NAMES.items():
                aliases[ours] = (*aliases.get(ours, ()), claude_name)
            events = {**CLAUDE_EVENT_NAMES, FAILURE_EVENT: "post_tool"}
            found, never = registered_hooks(request["hooks"], events, aliases)
            hooks.callers[:] = found
            hooks.caller = HookCallbacks(channel).ask
            hooks.on_halt = halt
            hooks.permission_mode = args.permission_mode or ("default" if mode == "ask" else mode)
            if never:
                notice(f"hooks for {', '.join(never)} are registered but reasonix -p never reaches those events")
            body["hooks_applied"] = True
            body["hook_on_failure_supported"] = True
        return body

    def mcp_status() -> dict[str, object]:
        return {"mcpServers": mcp_listing()}

    channel = ControlChannel(
        out.raw,
        ControlHandlers(
            initialize=initialize,
            interrupt=interrupt,
            set_permission_mode=set_permission_mode,
            mcp_status=mcp_status,
            set_model=set_model,
        ),
    )
    asker = None
    if stdio_prompt:
        prompter.append(PermissionPrompt(channel))
        asker = prompter[0].ask

    def wrap_gate(gate: Gate) -> Gate:
        """Claude Code's ``--allowedTools`` / ``--disallowedTools`` in front of the configured gate, and (with
        ``--permission-prompt-tool stdio``) each call noted for the caller's prompt."""
        if pre_approved or disallowed:
            gate = ToolRules(pre_approved, disallowed, gate)
        return CallNoted(gate) if stdio_prompt else gate

    def notice(text: str) -> None:
        print(f"reasonix -p: {text}", file=sys.stderr, flush=True)

    try:
        workspace = check_workspace(args.workspace, CD_INTO_A_PROJECT)
        resume = args.resume
        if args.continue_:
            resume = last_conversation(workspace)
            if resume is None:
                raise NoConversationError("there is no earlier headless conversation here; drop --continue")
        if resume is not None:
            check_resume(workspace, resume)
            if args.fork_session:  # the conversation goes on under a new session_id; the original stays as it was
                resume = fork_conversation(workspace, resume)
        servers, sdk_servers = caller_servers(args.mcp_config, workspace) if args.mcp_config else ({}, [])
        for name in sdk_servers if not streamed else []:
            notice(
                f"the MCP server {name!r} is served inside the Claude Agent SDK (type sdk), which answers only "
                "with --input-format stream-json: its tools are not offered"
            )
        callers = (
            {name: partial(caller_transport, name, channel.mcp_message) for name in sdk_servers} if streamed else {}
        )
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
                allowed_tools=allowed,
                mcp_servers=servers,
                strict_mcp=args.strict_mcp_config,
                caller_hooks=streamed,
            ),
            env=os.environ,
            asker=asker,
            on_notice=notice,
            wrap_gate=wrap_gate,
            caller_mcp=callers,
        )
    except ReasonixError as exc:
        return fail(str(exc), ExitCode.USAGE)
    client, commands = conversation.client, conversation.commands
    if commands.notice:
        print(f"reasonix -p: {commands.notice}", file=sys.stderr)

    options = HeadlessOptions(max_turns=args.max_turns, permission_mode=mode)
    started: list[HeadlessConversation] = []
    halted: list[str] = []
    cancelled: list[ResultLine] = []
    problem: list[str] = []
    tail = (
        [TailBlock(tag="appended-system-prompt", body=args.append_system_prompt)] if args.append_system_prompt else []
    )

    def reopened(headless: HeadlessConversation) -> HeadlessConversation:
        """After an interrupt: the engine's session again from its journal (which mends what was cut off; the
        cache tracker and the budget go on), and its stream-json lines counted from here."""
        headless.conversation.reopen(keep_totals=True)
        again = HeadlessConversation(headless.conversation, on_event=out, options=options)
        again.model = headless.model
        return again

    async def readline() -> str:
        line: str = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return line

    async def turns(messages: trio.MemoryReceiveChannel[str], conversation: HeadlessConversation) -> None:
        nonlocal tail
        async for text in messages:
            with trio.CancelScope() as turn:
                running.append(turn)
                try:
                    await conversation.send(text, tail=tail)
                    tail = []
                finally:
                    running.remove(turn)
            if turn.cancelled_caught:  # an interrupt: the turn says so, and the conversation goes on from its journal
                why = f"stopped by a hook (continue: false): {halted[0]}" if halted else None
                halted.clear()
                out(conversation.result("cancelled", why or "interrupted by the caller (control request interrupt)"))
                conversation = reopened(conversation)
                started[0] = conversation

    async def converse() -> bool:
        async with conversation.opened():  # the MCP servers, then the session with their tools
            headless = HeadlessConversation(conversation, on_event=out, options=options)
            started.append(headless)
            out(headless.init_event())
            try:
                if not streamed:
                    await headless.send(prompt, tail=tail)
                else:
                    await turns(channel.messages(), headless)
                return True
            finally:
                headless = started[0]
                if headless.turn_running:  # cancelled mid-turn (Ctrl-C, a closed pipe): say what was spent
                    hint = f"interrupted; continue with reasonix -p --resume {headless.session_id}"
                    cancelled.append(headless.result("cancelled", hint))

    async def work() -> bool:
        with scope:
            try:
                if not streamed:
                    await converse()
                else:  # standard input is read from the start: the caller's MCP servers answer through it
                    try:
                        async with trio.open_nursery() as nursery:
                            nursery.start_soon(channel.read, readline)
                            await converse()
                            nursery.cancel_scope.cancel()
                    except BaseExceptionGroup as group:
                        raise sole(group) from None
            except ReasonixError as exc:
                if started:
                    raise
                problem.append(str(exc))
                return True
        return not scope.cancelled_caught

    finished = run_interruptible(work, resource=client)
    if channel.error is not None:
        return fail(str(channel.error), ExitCode.USAGE)
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
