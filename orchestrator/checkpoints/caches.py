"""What tools leave behind as caches: ``__pycache__`` and its ``.pyc`` files, ``.pytest_cache``, ``.mypy_cache``,
``.ruff_cache``, ``.hypothesis``, ``node_modules/.cache``.

Verify commands and tools write them as a side effect of running the code (Python writes bytecode unless
``PYTHONDONTWRITEBYTECODE`` is set, and most users do not set it). They are not anybody's work: checkpoints leave them
out (:data:`CACHE_EXCLUDES` in the store's excludes), so a step's or a turn's changes, undo and what a compacted log
tells the model never depend on whether bytecode was written; and a branch's merge neither takes them into the
workspace nor counts them as writes outside the step's declared files (:func:`is_tool_cache`).
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


CACHE_EXCLUDES = (
    *(f"{name}/" for name in sorted(CACHE_DIRS)),
    *(f"*{suffix}" for suffix in CACHE_SUFFIXES),
    "**/node_modules/.cache/",  # a pattern with an inner slash is anchored: ** finds it at any depth
)
"""The same caches as gitignore patterns, for the checkpoint store's excludes."""
