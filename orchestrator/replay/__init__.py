"""Replay and recording: re-running a scenario offline against the in-process emulator with the real orchestrator
(``reasonix replay``), checking its expectations and the cache guard, reporting the figures, and recording a live run
as a replayable scenario (``--record``). docs/DESIGN.md §6 describes scenarios and the emulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

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
    __getattr__ = lazy_names(__name__, _HOME)
