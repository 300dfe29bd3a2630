"""Scenarios and the DeepSeek emulator that plays them: the scenario format (a workspace, an objective, settings, the
scripted model replies per session, review answers, and what must hold at the end), the library of scripted scenarios
(``scenarios/library/``, each also a test), and the emulator (``scenarios.emulator``). It imports only ``sessions``
(docs/DESIGN.md §2); §6 describes it, and ``scenarios/README.md`` documents the script format. Each public name is
imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarios.format import (
        LIBRARY,
        Expectations,
        LoadedScenario,
        RecordedExchange,
        ReviewAnswer,
        Scenario,
        ScenarioError,
        ScenarioSettings,
        library_paths,
        load_scenario,
    )

__all__ = [
    "LIBRARY",
    "Expectations",
    "LoadedScenario",
    "RecordedExchange",
    "ReviewAnswer",
    "Scenario",
    "ScenarioError",
    "ScenarioSettings",
    "library_paths",
    "load_scenario",
]

_HOME = {
    "Expectations": "format",
    "LIBRARY": "format",
    "LoadedScenario": "format",
    "RecordedExchange": "format",
    "ReviewAnswer": "format",
    "Scenario": "format",
    "ScenarioError": "format",
    "ScenarioSettings": "format",
    "library_paths": "format",
    "load_scenario": "format",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = importlib.import_module(f"{__name__}.{home}")
        if home != name:
            value = getattr(value, name)
        globals()[name] = value
        return value
