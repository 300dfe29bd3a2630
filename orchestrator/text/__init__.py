"""The words users read, below everything that writes them: the one plural helper (``counted``), the one
text-shortening helper (``shorten``), and text from a model or a tool made safe to show on a terminal (``neutralise``
and its ``Text`` and pydantic-model forms). ``wording`` is standard library only (``reasonix --help`` imports it);
``safe_text`` uses rich and pydantic; ``json_nesting`` parses JSON input bounded in nesting (standard library).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.text.safe_text import neutralise, neutralise_model, neutralise_text
    from orchestrator.text.wording import counted, shorten

__all__ = ["counted", "neutralise", "neutralise_model", "neutralise_text", "shorten"]

_HOME = {
    "counted": "wording",
    "neutralise": "safe_text",
    "neutralise_model": "safe_text",
    "neutralise_text": "safe_text",
    "shorten": "wording",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
