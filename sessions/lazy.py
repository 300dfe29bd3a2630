"""Lazy public names for a package face of ``sessions``: each name is imported from its module on first use, so
importing the package stays cheap and free of import cycles (DESIGN §2).

    _HOME = {"Session": "session", "tokens": "tokens", ...}   # each public name → its module, relative to the package
    if not TYPE_CHECKING:
        __getattr__ = lazy_names(__name__, _HOME)

A name that is the module itself (``tokens`` above) gives the module.
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
        value: object = importlib.import_module(f"{package}.{module}")
        if module.rsplit(".", 1)[-1] != name:
            value = getattr(value, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
