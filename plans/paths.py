"""Write targets (paths, directories, globs) and whether two may name the same file: what the plan checks use to
find write conflicts, and what a branch's merge uses to tell declared writes from undeclared ones. Apart from
:mod:`plans.graph` so that a merge (and every module that imports one) does not import networkx."""

from __future__ import annotations

import fnmatch
import posixpath


def normalize_path(path: str) -> str:
    """``./src//a.py`` → ``src/a.py``; a trailing ``/`` (a directory) is kept."""
    raw = path.strip().replace("\\", "/")
    is_dir = raw.endswith("/")
    norm = posixpath.normpath(raw)  # never starts with "./"; "" and "./" come out as "."
    if norm == ".":
        norm = ""
    return norm + "/" if is_dir and norm else norm


def _is_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def _literal_prefix(pattern: str) -> str:
    """The text of a glob before its first wildcard: every path it matches starts with it."""
    return pattern[: min(i for i in (pattern.find(ch) for ch in "*?[") if i >= 0)]


def _literal_suffix(pattern: str) -> str:
    """The text of a glob after its last wildcard (or character class): every path it matches ends with it."""
    return pattern[max(pattern.rfind(ch) for ch in "*?[]") + 1 :]


def _either_starts(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def _either_ends(a: str, b: str) -> bool:
    return a.endswith(b) or b.endswith(a)


def paths_overlap(a: str, b: str) -> bool:
    """Whether two write targets (paths, directories or globs) may name the same file.

    Conservative, because a missed overlap lets two steps write one file at once: a glob's ``*`` matches across
    ``/``; a path is inside a directory it starts with; a glob overlaps a path when its literal prefix lies inside
    that path (``src`` and ``src/*.py``), or inside an explicit directory (``src/b/`` and ``src/*.py``); two globs
    overlap when their literal prefixes and suffixes agree (``src/*`` and ``*.py`` both name ``src/x.py``).
    """
    return _overlap(normalize_path(a), normalize_path(b))


def _overlap(a: str, b: str) -> bool:
    """:func:`paths_overlap` for normalized paths."""
    if not a or not b:
        return False
    if a == b:
        return True
    a_glob, b_glob = _is_glob(a), _is_glob(b)
    if a_glob and b_glob:
        return _either_starts(_literal_prefix(a), _literal_prefix(b)) and _either_ends(
            _literal_suffix(a), _literal_suffix(b)
        )
    if a_glob or b_glob:
        pattern, path = (a, b) if a_glob else (b, a)
        return _glob_overlaps_path(pattern, path)
    a_dir, b_dir = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return b.startswith(a_dir) or a.startswith(b_dir)


def _glob_overlaps_path(pattern: str, path: str) -> bool:
    """A glob overlaps a path it matches, a path inside a directory it matches (``src/?`` and ``src/a/b.py``), a
    directory its literal prefix lies in, and an explicit directory that lies in its literal prefix."""
    bare = path.rstrip("/")
    ancestors = (bare[:i] for i, ch in enumerate(bare) if ch == "/")
    if fnmatch.fnmatchcase(path, pattern) or any(fnmatch.fnmatchcase(a, pattern) for a in ancestors):
        return True
    prefix, inside = _literal_prefix(pattern), bare + "/"
    return prefix.startswith(inside) or (path.endswith("/") and inside.startswith(prefix))
