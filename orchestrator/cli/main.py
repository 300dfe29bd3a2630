"""The ``reasonix`` command line.

Each subcommand lives in ``orchestrator/cli/commands/<name>.py`` and exposes ``configure(parser)`` and
``run(args) -> int``.
Command modules import only the standard library at module level and pull in heavy things (trio, httpx, pydantic,
rich, the tokenizer) inside ``run``, so that ``reasonix --help`` answers at once (DESIGN §7).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol, cast

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "code": ("orchestrator.repl.command", "an interactive conversation on the workspace (bare `reasonix` too)"),
    "goal": ("orchestrator.cli.commands.goal", "plan, review, execute and verify a goal until it is complete"),
    "plan": ("orchestrator.cli.commands.plan", "plan mode: plan and review only; the approved plan is saved"),
    "exec": ("orchestrator.cli.commands.exec_plan", "execute an approved plan file as a goal"),
    "run": ("orchestrator.cli.commands.run", "one executor session on one task, streamed to the terminal"),
    "replay": (
        "orchestrator.cli.commands.replay",
        "re-run a scenario offline against the emulator, as a regression test",
    ),
    "emulate": ("orchestrator.cli.commands.emulate", "run the DeepSeek API emulator on loopback"),
    "plans": ("orchestrator.cli.commands.plans", "validate, show and diff plan documents"),
    "doctor": ("orchestrator.cli.commands.doctor", "check configuration, key, server, tokenizer and tools"),
    "runs": ("orchestrator.cli.commands.runs", "past runs, newest first; runs show ID: plan, events, costs"),
    "checkpoints": (
        "orchestrator.cli.commands.checkpoints",
        "the checkpoints taken before each step, with their files",
    ),
    "undo": ("orchestrator.cli.commands.undo", "take back the last step (or --run ID --step S and what followed)"),
    "trust": ("orchestrator.cli.commands.trust", "trust this workspace's reasonix.toml as it is now"),
}


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
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = _load(module)
        if command is None:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        command.configure(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv and sys.stdin.isatty() and sys.stdout.isatty():
        argv = ["code"]  # bare `reasonix` in a terminal opens the conversation
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        print('\nreasonix: not a terminal, so no conversation; for one task use reasonix run "<task>"', file=sys.stderr)
        return 2
    command = _load(args._module)
    assert command is not None
    try:
        return command.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
