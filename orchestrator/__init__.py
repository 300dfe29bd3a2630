"""The supervisor and everything around it: the goal loop, plan review, escalation, budgets, events, the terminal UI,
configuration, replay and recording, and the ``reasonix`` command line. It may import ``sessions``, ``plans`` and
``scenarios``; nothing imports it. ``__all__`` names its parts (subpackages and the modules ``build``, ``errors`` and
``events``); each is imported on first use, so ``import orchestrator`` loads no dependency and ``reasonix --help`` only
the command line. The layout and the rules behind it are in ``docs/DESIGN.md`` (§2 the layout, §5 the orchestration
model, §8 the exception trees).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator import (
        acp,
        api,
        bench,
        branches,
        build,
        checkpoints,
        cli,
        config,
        conversation,
        errors,
        events,
        goal,
        headless,
        mcp,
        policy,
        repl,
        replay,
        review,
        runs,
        serve,
        summary,
        text,
        ui,
    )

__all__ = [
    "acp",
    "api",
    "bench",
    "branches",
    "build",
    "checkpoints",
    "cli",
    "config",
    "conversation",
    "errors",
    "events",
    "goal",
    "headless",
    "mcp",
    "policy",
    "repl",
    "replay",
    "review",
    "runs",
    "serve",
    "summary",
    "text",
    "ui",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a part on first use (``orchestrator.goal``), keeping ``import orchestrator`` free of dependencies."""
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
