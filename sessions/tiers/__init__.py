"""The tiers of a long context (DESIGN §3.6 "Tiers"): stale large tool results snipped to a head and tail when that
pays (``snip.py``, the rule in ``policy.py``), compaction with everything it folds archived, a forced collapse to
placeholders (``ladder.py``), the originals kept beside the journal (``archive.py``) and the ``recall`` tool that
returns one byte for byte (``recall.py``). A session uses them when ``SessionSettings.tiers`` is on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.tiers.archive import Archive
    from sessions.tiers.ladder import Ladder
    from sessions.tiers.policy import SnipChoice, TokenPrices
    from sessions.tiers.recall import RecallTool, tiered_registry, with_recall
    from sessions.tiers.snip import RECALL_TOOL, markers_in

__all__ = [
    "RECALL_TOOL",
    "Archive",
    "Ladder",
    "RecallTool",
    "SnipChoice",
    "TokenPrices",
    "markers_in",
    "tiered_registry",
    "with_recall",
]

_HOME = {
    "Archive": "archive",
    "Ladder": "ladder",
    "RECALL_TOOL": "snip",
    "RecallTool": "recall",
    "SnipChoice": "policy",
    "TokenPrices": "policy",
    "markers_in": "snip",
    "tiered_registry": "recall",
    "with_recall": "recall",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
