"""Slash commands of the conversation that belong to an extension: custom commands (``/NAME``), skills (``/skills``,
``/skill new``) and memory (``/remember``, ``/memory``). They live with the conversation, which they drive, and import
the extensions below them (``orchestrator/extensions/``, ``orchestrator/memory/``), never the other way round."""

from __future__ import annotations

__all__: list[str] = []
