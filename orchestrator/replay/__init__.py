"""Replay and recording: re-running a scenario offline against the in-process emulator with the real orchestrator
(``reasonix replay``), checking its expectations and the cache guard, reporting the figures, and recording a live run
as a replayable scenario (``--record``). docs/DESIGN.md §6 describes scenarios and the emulator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.replay.recorder import Recorder
    from orchestrator.replay.report import ReplayReport
    from orchestrator.replay.runner import replay, replay_scenario

__all__ = [
    "Recorder",
    "ReplayReport",
    "replay",
    "replay_scenario",
]

_HOME = {
    "Recorder": "recorder",
    "ReplayReport": "report",
    "replay": "runner",
    "replay_scenario": "runner",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value
