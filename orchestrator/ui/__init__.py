"""What the user sees: session events rendered on the terminal (rich) or as JSON lines for ``--json``, the goal view
(plan tree, steps, escalations, the cost and cache footer), and the approval prompt before a command or a write.
Renderers are plain callables ``(event) -> None`` that keep only what display needs. Importing this package loads
nothing. The words themselves (plurals, shortening, model text made safe) are :mod:`orchestrator.text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.ui.goal_view import GoalTerminalUI, summary_text
    from orchestrator.ui.stream import JsonLinesRenderer, TerminalRenderer

__all__ = [
    "GoalTerminalUI",
    "JsonLinesRenderer",
    "TerminalRenderer",
    "summary_text",
]

_HOME = {
    "GoalTerminalUI": "goal_view",
    "summary_text": "goal_view",
    "JsonLinesRenderer": "stream",
    "TerminalRenderer": "stream",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
