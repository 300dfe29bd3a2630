"""The ``reasonix`` command line.

Each subcommand lives in ``orchestrator/cli/commands/<name>.py`` and exposes ``configure(parser)`` and
``run(args) -> int``.
Command modules import only the standard library at module level and pull in heavy things (trio, httpx, pydantic,
rich, the tokenizer) inside ``run``, so that ``reasonix --help`` answers at once (DESIGN §7).

:func:`main` is the one place where whatever escapes a command ends: exit statuses are the table in
:mod:`orchestrator.exits`, an API error or Ctrl-C becomes one line (also from inside trio's exception groups), and
a closed standard output (``reasonix replay | head -3``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol, cast

from orchestrator.exits import ExitCode, escaped

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "code": ("orchestrator.cli.commands.code", "an interactive conversation on the workspace (bare `reasonix` too)"),
    "chat": ("orchestrator.cli.commands.chat", "a conversation with no tools, for questions (piped: answer and exit)"),
    "goal": ("orchestrator.cli.commands.goal", "plan, review, execute and verify a goal until it is complete"),
    "plan": ("orchestrator.cli.commands.plan", "plan mode: plan and review only; the approved plan is saved"),
    "exec": ("orchestrator.cli.commands.exec_plan", "execute an approved plan file as a goal"),
    "run": ("orchestrator.cli.commands.run", "one executor session on one task, streamed to the terminal"),
    "print": (
        "orchestrator.cli.commands.headless",
        "headless: one task without a terminal (reasonix -p PROMPT), as text, json or stream-json",
    ),
    "replay": (
        "orchestrator.cli.commands.replay",
        "re-run a scenario offline against the emulator, as a regression test",
    ),
    "emulate": ("orchestrator.cli.commands.emulate", "run the DeepSeek API emulator on loopback"),
    "plans": ("orchestrator.cli.commands.plans", "validate, show and diff plan documents"),
    "doctor": ("orchestrator.cli.commands.doctor", "check configuration, key, server, tokenizer and tools"),
    "batch": ("orchestrator.cli.commands.batch", "many goals from a file, each in its own copy; --ray for a cluster"),
    "runs": ("orchestrator.cli.commands.runs", "past runs, newest first; runs show ID: plan, events, costs"),
    "checkpoints": (
        "orchestrator.cli.commands.checkpoints",
        "the checkpoints taken before each step, with their files",
    ),
    "undo": ("orchestrator.cli.commands.undo", "take back the last step (or --run ID --step S and what followed)"),
    "setup": ("orchestrator.cli.commands.setup", "first-run setup: check and save the API key, the preset and sandbox"),
    "trust": ("orchestrator.cli.commands.trust", "trust this workspace's reasonix.toml as it is now"),
    "completion": ("orchestrator.cli.commands.completion", "print a shell completion script (bash, zsh, tcsh)"),
    "mcp": ("orchestrator.cli.commands.mcp", "MCP servers: mcp list shows each server, its state and its tools"),
    "acp": (
        "orchestrator.cli.commands.acp",
        "an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains, VS Code)",
    ),
    "hooks": ("orchestrator.cli.commands.hooks", "hooks: hooks list shows each configured hook and where it is from"),
    "serve": ("orchestrator.cli.commands.serve", "the orchestration service: an HTTP API and dashboard for goals"),
    "bench": ("orchestrator.cli.commands.bench", "benchmark on a task suite: check, run (--oracle or live), compare"),
}


TOP_LEVEL_FLAGS = ("-h", "--help", "--version")
"""The flags of ``reasonix`` itself; any other flag before a command is ``reasonix code``'s."""
PRINT_FLAGS = ("-p", "--print")
"""``reasonix -p PROMPT …`` (anywhere before a command) is ``reasonix print PROMPT …``, as in Claude Code."""
PRINT_FORMAT_FLAGS = ("--input-format", "--output-format")
"""Without ``-p``, these flags before any command also mean ``reasonix print``: the Claude Agent SDKs start their
CLI with ``--output-format stream-json … --input-format stream-json`` and no ``-p``."""


class _Command(Protocol):
    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(module: str) -> _Command | None:
    try:
        return cast(_Command, importlib.import_module(module))
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None  # not built yet
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reasonix",
        description="A DeepSeek-native coding agent: a cache-stable planner and executor under one supervisor.",
        epilog="Without a command, reasonix is `reasonix code` and takes its flags: reasonix --base-url URL "
        "--mode plan opens the conversation (reasonix code --help lists them).",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = _load(module)
        if command is None:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        command.configure(p)
        p.set_defaults(_module=module)
    return parser


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked: reading the installed metadata costs every command about 50 ms."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {_version()}")  # on standard output, as argparse's own version action
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reasonix")
    except PackageNotFoundError:
        return "(not installed)"


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    flags = [w for w in argv if w.startswith("-")] if not argv or argv[0].startswith("-") else []
    if any(w in PRINT_FLAGS or w.split("=", 1)[0] in PRINT_FORMAT_FLAGS for w in flags):
        argv = ["print", *(w for w in argv if w not in PRINT_FLAGS)]
    if not argv and sys.stdin.isatty() and sys.stdout.isatty():
        argv = ["code"]  # bare `reasonix` in a terminal opens the conversation
    elif argv and argv[0].startswith("-") and argv[0] not in TOP_LEVEL_FLAGS:
        argv = ["code", *argv]  # `reasonix --base-url URL` is `reasonix code --base-url URL`
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        print('\nreasonix: not a terminal, so no conversation; for one task use reasonix run "<task>"', file=sys.stderr)
        return ExitCode.USAGE
    command = _load(args._module)
    assert command is not None
    code = command.run(args)
    sys.stdout.flush()  # a closed pipe shows here, inside the handler below, not at interpreter exit
    return code


def main(argv: Sequence[str] | None = None) -> int:
    # httpx imports its own command-line client when it can, and with it click, rich's console and pygments (about
    # 40 ms and 6 MiB): Reasonix never runs that client, so a command that imports httpx does not load it either.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    try:
        return _dispatch(argv)
    except BaseException as exc:
        code = escaped(exc, _prog(argv))
        if code is None:
            raise
        return code


def _prog(argv: Sequence[str] | None) -> str:
    """``reasonix goal`` for the messages of ``reasonix goal ...``."""
    words = sys.argv[1:] if argv is None else list(argv)
    if any(w in PRINT_FLAGS or w.split("=", 1)[0] in PRINT_FORMAT_FLAGS for w in words):
        return "reasonix -p"
    name = next((w for w in words if w in COMMANDS), None)
    return f"reasonix {name}" if name else "reasonix"


if __name__ == "__main__":
    sys.exit(main())
