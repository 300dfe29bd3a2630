"""The slash commands of the conversation. Each handler gets the conversation and the text after the command and
returns False to end the conversation."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import trio
from rich.text import Text

from orchestrator.extensions.custom_commands import find_custom_commands
from orchestrator.repl.conversation import Conversation
from orchestrator.repl.slash.custom import run_custom
from orchestrator.repl.slash.memory import memory_command, remember_command
from orchestrator.repl.slash.skills import skill_command, skills_command
from orchestrator.text.wording import counted, usd
from sessions.accounting import PriceError, tokens
from sessions.wire import DeepSeekError

Handler = Callable[[Conversation, str], Awaitable[bool]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    usage: str
    help: str
    handler: Handler


async def _help(conv: Conversation, arg: str) -> bool:
    for command in COMMANDS.values():
        if conv.offered is not None and command.name not in conv.offered:
            continue
        conv.console.print(Text(f"  {command.usage:<27}", style="bold"), Text(command.help), soft_wrap=True)
    keys = [
        *([("Shift+Tab", "cycle the mode: ask → auto → plan")] if conv.has_modes else []),
        ("@path", "attach a file's current text to the message"),
        ("Esc Enter", "a new line in the message (Alt+Enter too)"),
        ("Ctrl-R", "search the history of this workspace"),
        ("Ctrl-C", "cancel the running turn; clear the line; twice on an empty line: exit"),
        ("Esc", "cancel the running turn (what you type meanwhile is queued and runs after it)"),
        *([("Esc Esc", "on an empty line: /rewind")] if conv.has_modes else []),
        ("Ctrl-D", "exit (on an empty line)"),
    ]
    for custom in find_custom_commands(conv.workspace, taken=BUILT_IN).values():
        usage = f"/{custom.name} [args]"
        conv.console.print(Text(f"  {usage:<27}", style="bold"), Text(f"{custom.description} ({custom.source})"))
    for key, what in keys:
        conv.console.print(Text(f"  {key:<27}", style="bold cyan"), Text(what), soft_wrap=True)
    return True


async def _exit(conv: Conversation, arg: str) -> bool:
    return False


async def _cost(conv: Conversation, arg: str) -> bool:
    s = conv.session
    u = s.usage
    conv.console.print(
        f"session {usd(s.cost_usd)} · {counted(s.requests, 'request')} · prompt {u.prompt_tokens} tokens "
        f"({u.prompt_cache_hit_tokens} hit, {u.prompt_cache_miss_tokens} miss, cache {conv.hit_ratio() * 100:.1f}%) "
        f"· completion {u.completion_tokens} tokens",
        soft_wrap=True,
        highlight=False,
    )
    if conv.session.journal is not None and conv.journal_path.exists():
        from datetime import UTC, datetime

        from orchestrator.repl.preferences.price import cache_savings
        from sessions.journal import read_journal

        events = read_journal(conv.journal_path).events
        conv.say(cache_savings(events, conv.resolved.config.price_book(), datetime.now(UTC)).line(), "")
    with trio.move_on_after(5):
        try:
            conv.balance = (await conv.client.balance(5)).short()
            conv.say(f"balance {conv.balance}", "")
        except DeepSeekError as exc:
            conv.say(f"balance not known: {exc.message}")
    others = (
        ("subagents", conv.subagent_cost_usd, conv.subagent_requests, "their own sessions, through the task tool"),
        ("/plan and /goal", conv.goal_cost_usd, conv.goal_requests, "their own planner and executor sessions"),
    )
    for label, cost, requests, how in others:  # what was spent beside the conversation's own session
        if requests:
            line = f"{label} {usd(cost)} · {counted(requests, 'request')} ({how}) · total {usd(conv.total_cost_usd)}"
            conv.console.print(line, soft_wrap=True, highlight=False)
    return True


def context_figures(conv: Conversation) -> tuple[int, int, int]:
    """Tokens of the prefix (system prompt and tools), of the log, and of the tail the next message will carry."""
    s = conv.session
    prefix = tokens.count(s.prefix.system_bytes.decode("utf-8")) + tokens.count(s.prefix.tools_bytes.decode("utf-8"))
    log = sum(tokens.count_many([entry.data.decode("utf-8") for entry in s.log])) if len(s.log) else 0
    from orchestrator.repl.modes import mode_block

    tail = tokens.count(mode_block(conv.mode).render()) if conv.mode != conv.sent_mode else 0
    return prefix, log, tail


async def _context(conv: Conversation, arg: str) -> bool:
    prefix, log, tail = context_figures(conv)
    window = conv.session.settings.context_window
    total = prefix + log + tail
    conv.console.print(
        f"prefix {prefix} tokens · log {log} tokens ({len(conv.session.log)} messages) · tail {tail} tokens · "
        f"{total} of a {window}-token window ({total / window * 100:.1f}%); the next request re-sends all of it "
        f"and misses only what is new after it",
        soft_wrap=True,
        highlight=False,
    )
    return True


async def _output(conv: Conversation, arg: str) -> bool:
    """The whole output of the latest command or MCP tool call (``/output 2``: the one before), neutralised."""
    from orchestrator.text.safe_text import neutralise

    outputs = conv.renderer.outputs
    back = int(arg) if arg.strip().isdigit() and int(arg) > 0 else 1
    if not outputs:
        conv.say("no command has run yet in this conversation")
        return True
    if back > len(outputs):
        conv.say(f"/output {back}: only {len(outputs)} kept", "yellow")
        return True
    title, text = outputs[-back]
    conv.say(title)
    conv.console.print(Text(neutralise(text.rstrip("\n"))), soft_wrap=True, highlight=False)
    return True


async def _pro(conv: Conversation, arg: str) -> bool:
    conv.pro_next = True
    conv.say(f"the next turn runs on {conv.resolved.config.models.pro} (its cache is separate from flash's)")
    if arg.strip():
        await conv.turn(arg.strip())
    return True


PRESETS = ("flash", "auto", "pro")


async def _preset(conv: Conversation, arg: str) -> bool:
    choice = arg.strip()
    if not choice:
        preset = conv.preset or conv.resolved.config.goal.preset
        conv.say(f"preset: {preset} (/preset flash|auto|pro sets how /plan and /goal escalate)", "")
        return True
    if choice not in PRESETS:
        conv.say(f"/preset {choice}: choose one of {', '.join(PRESETS)}", "red")
        return True
    conv.preset = choice
    conv.say(f"/plan and /goal now run with preset {choice}", "")
    return True


async def _model(conv: Conversation, arg: str) -> bool:
    from orchestrator.build import resolve_model

    choice = arg.strip()
    if not choice:
        conv.say(f"model: {conv.model} (/model flash|pro|ID switches; each model has its own cache)", "")
        return True
    model = resolve_model(conv.resolved.config, choice)
    try:
        conv.resolved.config.price_book().family_of(model)
    except PriceError as exc:  # it names the known models
        conv.say(f"/model {choice}: {exc}", "red")
        return True
    conv.model = model
    conv.say(f"model: {model}")
    return True


async def _language(conv: Conversation, arg: str) -> bool:
    choice = arg.strip()
    if not choice:
        shown = conv.language or "not set (the model's choice)"
        conv.say(f"language: {shown} (/language NAME sets it from the next message; /language off clears it)", "")
        return True
    conv.language = None if choice == "off" else choice
    if conv.language is None:
        conv.sent_language = None
    conv.say(f"language: {conv.language or 'the model chooses'}, from the next message (the cached prefix stays)")
    return True


async def _style(conv: Conversation, arg: str) -> bool:
    from orchestrator.repl.preferences.style import StyleError, style_text, styles_of

    choice = arg.strip()
    known = ", ".join(sorted(styles_of(conv.resolved.config.conversation.styles)))
    if not choice:
        conv.say(f"output style: {conv.style or 'none'} (/style NAME|off starts a new session; styles: {known})", "")
        return True
    style = None if choice == "off" else choice
    if style is not None:
        try:
            style_text(style, conv.resolved.config.conversation.styles)
        except StyleError as exc:
            conv.say(f"/style: {exc}", "red")
            return True
    conv.style = style
    conv.new_session()
    conv.say(
        f"output style {style or 'none'}: it is part of the system prompt, so this is a new session "
        f"(the old one stays journaled) · journal {conv.journal_path}",
        "yellow",
    )
    return True


async def _clear(conv: Conversation, arg: str) -> bool:
    conv.new_session()
    conv.say(f"a new conversation · journal {conv.journal_path}")
    return True


async def _compact(conv: Conversation, arg: str) -> bool:
    if not await conv.session.compact(reason="asked for with /compact"):
        conv.say("nothing to compact yet: the conversation is too short")
    return True


async def _run_cli(module_name: str, arg: str, conv: Conversation) -> None:
    """A ``reasonix`` subcommand with the workspace of the conversation, in a worker thread (it runs its own trio
    loop, as it does on the command line)."""
    import importlib
    import shlex

    module = importlib.import_module(f"orchestrator.cli.commands.{module_name}")
    parser = argparse.ArgumentParser(prog=f"/{module_name}", exit_on_error=False)
    module.configure(parser)
    try:
        with contextlib.redirect_stderr(io.StringIO()) as errors:
            args = parser.parse_args([*shlex.split(arg), "--workspace", str(conv.workspace)])
    except (argparse.ArgumentError, SystemExit, ValueError):
        conv.say(f"/{module_name}: {errors.getvalue().strip() or 'bad arguments'}", "red")
        return
    conv.renderer.end_line()
    await trio.to_thread.run_sync(module.run, args)


async def _runs(conv: Conversation, arg: str) -> bool:
    await _run_cli("runs", arg, conv)
    return True


async def _undo(conv: Conversation, arg: str) -> bool:
    await _run_cli("undo", arg, conv)
    return True


async def _rewind(conv: Conversation, arg: str) -> bool:
    from orchestrator.repl.rewind import rewind_command

    return await rewind_command(conv, arg)


async def _fork(conv: Conversation, arg: str) -> bool:
    from orchestrator.repl.rewind import fork_command

    return await fork_command(conv, arg)


async def _counted_goal(conv: Conversation, arg: str, *, review: bool) -> None:
    """Run a goal inline and add what its runs spent (read back from their journals) to the conversation's costs."""
    from orchestrator.repl.goals import run_goal
    from orchestrator.runs.history import list_runs

    before = {r.run_id for r in list_runs(conv.workspace)}
    try:
        await run_goal(conv, arg, review=review)
    finally:
        for run in list_runs(conv.workspace):
            if run.run_id not in before and run.run_id != conv.run_id:
                conv.add_goal_costs(run.cost_usd, run.requests)


async def _plan(conv: Conversation, arg: str) -> bool:
    await _counted_goal(conv, arg, review=True)
    return True


async def _goal(conv: Conversation, arg: str) -> bool:
    await _counted_goal(conv, arg, review=False)
    return True


COMMANDS: dict[str, SlashCommand] = {
    c.name: c
    for c in (
        SlashCommand("/help", "/help", "the commands and keys", _help),
        SlashCommand(
            "/plan", "/plan <objective>", "plan, review here (approve/revise/edit/cancel), execute, verify", _plan
        ),
        SlashCommand("/goal", "/goal <objective>", "the same without the review: approved automatically", _goal),
        SlashCommand("/pro", "/pro [message]", "the next turn runs on the pro model", _pro),
        SlashCommand("/model", "/model [flash|pro|ID]", "show or switch the model of the next turns", _model),
        SlashCommand("/preset", "/preset [flash|auto|pro]", "how /plan and /goal escalate from flash to pro", _preset),
        SlashCommand("/output", "/output [N]", "the whole output of the latest command (N: the Nth latest)", _output),
        SlashCommand("/cost", "/cost", "what the conversation cost, with and without the cache; the balance", _cost),
        SlashCommand("/context", "/context", "tokens of the prefix, the log and the next tail", _context),
        SlashCommand("/compact", "/compact", "summarize the older part of the conversation now", _compact),
        SlashCommand("/language", "/language [NAME|off]", "the language of replies, from the next message", _language),
        SlashCommand("/style", "/style [NAME|off]", "the output style: a new session with it folded in", _style),
        SlashCommand("/clear", "/clear", "start a new conversation (the old one stays journaled)", _clear),
        SlashCommand("/runs", "/runs [show RUN_ID]", "past runs of this workspace", _runs),
        SlashCommand("/undo", "/undo [--run ID --step S]", "take back the files of the last turn or goal step", _undo),
        SlashCommand(
            "/rewind", "/rewind [N [both|code|conversation]]", "code and/or conversation back to before turn N", _rewind
        ),
        SlashCommand("/fork", "/fork [N]", "a new conversation from before turn N (the old one is kept)", _fork),
        SlashCommand("/remember", "/remember [--shared] TEXT", "keep a note in the project's memory", remember_command),
        SlashCommand("/memory", "/memory [edit]", "show (or edit) what the project's memory holds", memory_command),
        SlashCommand("/skills", "/skills", "the skills the model can load, and where they are", skills_command),
        SlashCommand("/skill", "/skill new NAME", "write a skill template to .reasonix/skills/NAME.md", skill_command),
        SlashCommand("/exit", "/exit", "leave (Ctrl-D too)", _exit),
    )
}


BUILT_IN = frozenset(name.lstrip("/") for name in COMMANDS)


async def dispatch(conv: Conversation, line: str, commands: Mapping[str, SlashCommand] | None = None) -> bool:
    """Run the slash command on ``line`` (one of ``commands``, default all, with the workspace's custom commands);
    False ends the conversation."""
    offered = COMMANDS if commands is None else commands
    name, _, arg = line.strip().partition(" ")
    command = offered.get(name)
    if (
        command is None
        and offered is COMMANDS
        and name[1:] in (custom := find_custom_commands(conv.workspace, taken=BUILT_IN))
    ):
        return await run_custom(conv, custom[name[1:]], arg)
    if command is None:
        matches = [c for c in offered if c.startswith(name)]
        if len(matches) != 1:
            conv.say(f"unknown command {name}; /help lists them", "yellow")
            return True
        command = offered[matches[0]]
    try:
        return await command.handler(conv, arg)
    except Exception as exc:  # noqa: BLE001 — a failed command must not end the conversation (Cancelled is not one)
        conv.say(f"{command.name} failed: {type(exc).__name__}: {exc}", "red")
        return True
