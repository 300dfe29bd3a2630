"""What tools leave behind as caches: ``__pycache__`` and its ``.pyc`` files, ``.pytest_cache``, ``.mypy_cache``,
``.ruff_cache``, ``.hypothesis``, ``node_modules/.cache``.

A branch's verify commands and tools write them as a side effect of running the code (Python writes bytecode unless
``PYTHONDONTWRITEBYTECODE`` is set, and most users do not set it). They are not the step's work: a merge neither takes
them into the workspace nor counts them as writes outside the step's declared files.
"""

from __future__ import annotations

CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""A path with one of these as a directory component is a cache."""
CACHE_SUFFIXES = (".pyc", ".pyo")
NODE_CACHE = ("node_modules", ".cache")
"""``node_modules/.cache`` at any depth (babel, eslint, webpack and the like keep theirs there)."""


def is_tool_cache(rel: str) -> bool:
    """``rel`` (POSIX, relative to the workspace) lies in a tool's cache, or is compiled bytecode."""
    parts = rel.split("/")
    if rel.endswith(CACHE_SUFFIXES) or any(part in CACHE_DIRS for part in parts[:-1]):
        return True
    return any(tuple(parts[i : i + 2]) == NODE_CACHE for i in range(len(parts) - 2))
