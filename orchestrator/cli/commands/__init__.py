"""One module per ``reasonix`` subcommand, each exposing ``configure(parser)`` and ``run(args) -> int``; the table in
``orchestrator/cli/main.py`` names them and their one-line help. A command module imports only the standard library at
module level (``reasonix --help`` imports all of them) and everything heavy inside ``run``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.cli.commands import (
        acp,
        batch,
        bench,
        chat,
        checkpoints,
        code,
        completion,
        doctor,
        emulate,
        exec_plan,
        goal,
        headless,
        mcp,
        plan,
        plans,
        replay,
        run,
        runs,
        serve,
        setup,
        trust,
        undo,
    )

__all__ = [
    "acp",
    "batch",
    "bench",
    "chat",
    "checkpoints",
    "code",
    "completion",
    "doctor",
    "emulate",
    "exec_plan",
    "goal",
    "headless",
    "mcp",
    "plan",
    "plans",
    "replay",
    "run",
    "runs",
    "serve",
    "setup",
    "trust",
    "undo",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a command module on first use."""
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
