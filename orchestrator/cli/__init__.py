"""The ``reasonix`` command line: ``main`` (the entry point and the table of subcommands) and ``commands`` (one module
per subcommand, each with ``configure(parser)`` and ``run(args) -> int``). The other modules here are what the
commands share. Importing this package loads nothing but the standard library, so ``reasonix --help`` answers at once
(docs/DESIGN.md §7); a command pulls in trio, httpx, pydantic and rich inside its ``run``. Where to add a command:
docs/DESIGN.md §9.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.cli import commands, main

__all__ = ["commands", "main"]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import ``main`` or ``commands`` on first use (both are import-light themselves)."""
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
