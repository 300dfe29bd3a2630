"""``recall``: an archived original back, byte for byte, as a tool result (DESIGN §3.6 "Tiers").

In a session's tool list only when its tiers are on (:func:`with_recall`), so a session without tiers has the prefix
it always had. The result is appended like any other: the log only grows, and the cache holds.
"""

from __future__ import annotations

from pathlib import Path

import trio
from pydantic import Field

from sessions.tiers.archive import Archive
from sessions.tiers.snip import RECALL_TOOL
from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.registry import ToolRegistry

_SHOWN_IDS = 20


class RecallArgs(ToolArgs):
    id: str = Field(min_length=1, max_length=120, description='The id a marker names, e.g. recall("call_3") → call_3.')


class RecallTool(Tool[RecallArgs]):
    """Returns a tool result (or a compacted part of the conversation) that was snipped or archived."""

    name = RECALL_TOOL
    description = (
        "Return an archived original byte for byte: a tool result that was snipped or collapsed to keep the context "
        'small, or an earlier part of the conversation that was compacted. Pass the id its marker names (recall("…")).'
    )
    args_model = RecallArgs
    read_only = True
    parallel_safe = True

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    async def run(self, args: RecallArgs, ctx: ToolContext) -> ToolResult:
        await trio.lowlevel.checkpoint()
        text = self.archive.get(args.id)
        if text is None:
            known = self.archive.ids()
            shown = ", ".join(known[-_SHOWN_IDS:]) or "none yet"
            raise ToolInputError(f"nothing is archived under {args.id!r}; archived ids (the latest): {shown}")
        return ToolResult(content=text)


def with_recall(registry: ToolRegistry, archive: Archive) -> ToolRegistry:
    """``registry`` with the ``recall`` tool over ``archive`` (a session whose tiers are on)."""
    return ToolRegistry([*(t for t in registry if t.name != RECALL_TOOL), RecallTool(archive)])


def tiered_registry(registry: ToolRegistry, tiers: bool, journal_path: Path | None) -> ToolRegistry:
    """``registry`` as a session's tiers need it: with ``recall`` over the archive beside ``journal_path`` when
    ``tiers`` is on, else unchanged (the prefix of a session without tiers does not move)."""
    return with_recall(registry, Archive.beside(journal_path)) if tiers else registry
