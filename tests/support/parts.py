"""The real parts some tests need and a machine may lack, one pytest marker each.

A test that needs a part carries its marker (``@pytest.mark.bwrap``, or ``pytestmark = pytest.mark.bwrap`` for a whole
module); tests/conftest.py checks the marker before the test runs. Where the part is missing the test skips with the
sentence that says what to install, except in CI (``CI`` set): there a missing part is a failure, never a silent skip
(``.ci/run`` installs every part). Tests that take the ``bwrap`` fixture get the marker without writing it, and a test
that uses a part explicitly without its marker fails (``tests/test_suite_isolation.py`` pins it).

Each check runs once per process: the answer cannot change while the suite runs.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True, slots=True)
class Part:
    marker: str
    """The pytest marker's name."""
    what: str
    """What it is, for the marker's description."""
    missing: Callable[[], str | None]
    """Why the part cannot be used here, naming what to install; ``None`` when it is present."""


def _bwrap_missing() -> str | None:
    from sessions.sandbox import sandbox_unavailable_reason

    return sandbox_unavailable_reason()


def _chromium_missing() -> str | None:
    browser = os.environ.get("REASONIX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return "no chromium on PATH: install it (Debian/Ubuntu: sudo apt-get install chromium chromium-driver)"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed: pip install -e '.[test]'"
    return None


def _node_missing() -> str | None:
    absent = [name for name in ("node", "npx") if shutil.which(name) is None]
    if absent:
        return f"{' and '.join(absent)} not on PATH: install Node.js (Debian/Ubuntu: sudo apt-get install nodejs npm)"
    return None


def _git_missing() -> str | None:
    if shutil.which("git") is None:
        return "git is not on PATH: install it (Debian/Ubuntu: sudo apt-get install git)"
    return None


def _setpriv_missing() -> str | None:
    from sessions.sandbox.reaper import armed

    if armed(["true"]).preexec_fn is not None:
        return "no setpriv with --pdeathsig on PATH: install util-linux 2.33 or later (sudo apt-get install util-linux)"
    return None


def _ray_missing() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed: pip install -e '.[test]' (or '.[ray]')"
    return None


PARTS: dict[str, Part] = {
    part.marker: part
    for part in (
        Part("bwrap", "the real bubblewrap sandbox", _bwrap_missing),
        Part("chromium", "a headless Chromium driven by Playwright", _chromium_missing),
        Part("node", "Node.js (node and npx)", _node_missing),
        Part("git", "the git command", _git_missing),
        Part("ray", "a local Ray cluster", _ray_missing),
        Part("setpriv", "util-linux's setpriv with --pdeathsig", _setpriv_missing),
    )
}


@functools.cache
def missing(marker: str) -> str | None:
    """Why the part behind ``marker`` is missing here (``None``: it is present)."""
    return PARTS[marker].missing()


_running: list[pytest.Item] = []
"""The test being run in this process (tests/conftest.py keeps it)."""


def running(item: pytest.Item | None) -> None:
    """Tell :func:`require` which test runs now (``None``: none)."""
    _running[:] = [] if item is None else [item]


def require(marker: str) -> None:
    """Skip the running test without the part, with the sentence that says what to install; fail instead in CI.

    A test that calls this (directly or through a fixture or helper) must carry the part's marker: one that does not
    fails, so the marker is on every test that needs the part and ``-m "not bwrap"`` and the like select truly."""
    if _running and _running[0].get_closest_marker(marker) is None:
        pytest.fail(f"{_running[0].nodeid} needs {PARTS[marker].what}: mark it @pytest.mark.{marker}")
    problem = missing(marker)
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the tests that need {PARTS[marker].what}: {problem}")
    pytest.skip(f"needs {PARTS[marker].what}: {problem}")


def path_without(bin_dir: Path, *names: str) -> str:
    """A ``PATH`` that finds every program of today's ``PATH`` but ``names``: one directory of links made in
    ``bin_dir``, for a test of how Reasonix behaves on a machine without a part that this one has."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for folder in reversed(os.environ.get("PATH", os.defpath).split(os.pathsep)):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name in names:
                continue
            link = bin_dir / entry.name
            if link.is_symlink():
                link.unlink()  # an earlier folder of PATH wins, as it does for the shell
            link.symlink_to(entry.path)
    return str(bin_dir)
