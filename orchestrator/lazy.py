"""Lazy public names for a package's ``__init__``: each name is imported from its module on first use, so importing
the package stays cheap (``reasonix --help`` loads nothing heavy) and free of import cycles.

    _HOME = {"GoalRunner": "runner", ...}   # each public name → the module (relative to the package) defining it
    if not TYPE_CHECKING:
        __getattr__ = lazy_names(__name__, _HOME)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, home: Mapping[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` for ``package`` that imports each name of ``home`` from its module on first use
    (and keeps it in the package, so the next lookup is a plain attribute)."""

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
