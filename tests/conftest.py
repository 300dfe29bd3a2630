"""Suite-wide settings: Hypothesis profiles, how many xdist workers, and a private state and config home per test.

The suite is a regression gate, so by default the property tests draw the same examples on every run (``derandomize``):
a commit that passed passes again. Exploration is a separate, deliberate run with fresh random examples and many more
of them::

    HYPOTHESIS_PROFILE=explore .venv/bin/pytest tests -q

Whatever it finds belongs in the test as an ``@example``, so the default run holds it from then on. The default
profile keeps no example database: a derandomized run needs none, and xdist workers share no file through it.

The suite runs under pytest-xdist (``-n auto`` in pyproject.toml). Most of its time is spent waiting on real processes
(the CLI, pseudo-terminals, bubblewrap, MCP servers, Chromium, the emulator) rather than computing, so ``auto`` means
twice the CPUs here; ``PYTEST_XDIST_AUTO_NUM_WORKERS=N`` sets it, and ``-n 0`` runs in one process (for ``pdb``).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.parts import PARTS, require, running
from tests.support.real_home import (
    REAL_HOME,
    REAL_HOME_VARIABLE,
    HomeGuard,
    reasonix_state,
    split_foreign,
    store_workspaces,
    suite_roots,
)

# A suite started in the background of a non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and so would
# every reasonix the tests start: their Ctrl-C tests would wait forever. The tests send Ctrl-C on purpose, so give the
# process (and through it each child) SIGINT back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# No outcome may depend on the machine's speed: hypothesis's per-example deadline and its too-slow health check both
# fail a correct test on a loaded machine (seen: a 2-core run beside other work), so neither applies here.
_SPEED_FREE = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", derandomize=True, print_blob=True, database=None, **_SPEED_FREE)
settings.register_profile("explore", max_examples=2000, print_blob=True, **_SPEED_FREE)
# bench/mutation_score.py: each mutant runs the tests that call it, so fewer examples (still derandomized) keep a
# module's run to minutes; a mutant that only a rare example kills counts as survived.
settings.register_profile("mutation", derandomize=True, max_examples=20, database=None, **_SPEED_FREE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

WORKERS_PER_CPU = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers a CPU, since the tests mostly wait (an explicit number in the environment wins)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, WORKERS_PER_CPU * cpus)


# What a test may inherit from the machine it runs on: nothing of the user's Reasonix, DeepSeek or shell state.
_INHERITED_NEVER = ("DEEPSEEK_", "XDG_", "HISTFILE", "ZDOTDIR", "REASONIX_")
_INHERITED_KEPT = ("REASONIX_CHROMIUM", "REASONIX_TEST_USER", REAL_HOME_VARIABLE)
_HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")


def _private_homes(root: Path) -> dict[str, str]:
    """A home and its XDG directories under ``root`` (each made, so a program that expects them finds them)."""
    homes = {
        "HOME": root / "home",
        "XDG_CONFIG_HOME": root / "home" / ".config",
        "XDG_STATE_HOME": root / "home" / ".local" / "state",
        "XDG_CACHE_HOME": root / "home" / ".cache",
        "XDG_DATA_HOME": root / "home" / ".local" / "share",
    }
    for path in homes.values():
        path.mkdir(parents=True, exist_ok=True)
    return {name: str(path) for name, path in homes.items()}


_GUARD: HomeGuard | None = None
_SUITE_HOME: list[Path] = []
_STORES: dict[str, Path] = {}
"""The real home's checkpoint stores when the run began, and the workspace each keeps."""


def _homes_base(rootdir: Path) -> Path | None:
    """Where the private homes live: the temporary directory, except for a checkout under ``/home`` (an ordinary
    user's, as ``.ci/sandbox-as-user`` makes): there, beside the checkout. The sandbox shows only the home that holds
    ``$HOME`` or the workspace, and the suite's own Python (the checkout's venv) must stay visible in it."""
    if rootdir.is_relative_to("/home"):
        base = rootdir / ".pytest-homes"
        base.mkdir(exist_ok=True)
        return base
    return None


_BEFORE: dict[str, tuple[int, int]] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Before any test (and before xdist starts its workers, which inherit all of it): the real home remembered, the
    user's key, base URL, XDG directories and shell history variables dropped, and a private home for the suite."""
    global _GUARD, _BEFORE
    for part in PARTS.values():
        config.addinivalue_line("markers", f"{part.marker}: needs {part.what} (tests/support/parts.py)")
    config.addinivalue_line("markers", "real_home: means to use the real user's home (tests/support/real_home.py)")
    os.environ.setdefault(REAL_HOME_VARIABLE, str(REAL_HOME))
    for name in list(os.environ):
        if name.startswith(_INHERITED_NEVER) and name not in _INHERITED_KEPT:
            del os.environ[name]
    suite_home = Path(tempfile.mkdtemp(prefix="reasonix-tests-home-", dir=_homes_base(config.rootpath)))
    config.add_cleanup(lambda: shutil.rmtree(suite_home, ignore_errors=True))
    _SUITE_HOME[:] = [suite_home]
    os.environ.update(_private_homes(suite_home))
    if not hasattr(config, "workerinput"):
        _BEFORE = reasonix_state(REAL_HOME)
        _STORES.update(store_workspaces(REAL_HOME))
    _GUARD = HomeGuard(REAL_HOME, [*suite_roots(config.rootpath), Path(tempfile.gettempdir()), suite_home])
    sys.addaudithook(_GUARD)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The controller compares what Reasonix keeps in the real home with what was there before the run: a process a
    test started that reached it fails the run."""
    if hasattr(session.config, "workerinput"):
        return
    after = reasonix_state(REAL_HOME)
    changed = sorted(p for p in set(_BEFORE) | set(after) if _BEFORE.get(p) != after.get(p))
    ours = [session.config._tmp_path_factory.getbasetemp(), *_SUITE_HOME]  # type: ignore[attr-defined]
    changed, foreign = split_foreign(REAL_HOME, changed, ours, {**_STORES, **store_workspaces(REAL_HOME)})
    if foreign:
        session.config.get_terminal_writer().line(
            f"note: {len(foreign)} files of checkpoint stores for workspaces outside this run changed meanwhile (a "
            "reasonix run in another terminal); not counted against the suite"
        )
    if changed:
        shown = "\n  ".join(changed[:20])
        session.config.get_terminal_writer().line(
            "the real home's Reasonix files changed while the suite ran: a process a test started reached them (tests "
            f"must use their private home), or a Reasonix you ran meanwhile did:\n  {shown}",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test taking the ``bwrap`` or ``chromium`` fixture needs that part: it gets the marker without writing it."""
    for item in items:
        for part in {"bwrap", "chromium"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(getattr(pytest.mark, part))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Each part a test is marked with must be here: without it the test skips saying what to install (fails in CI)."""
    for mark in item.iter_markers():
        if mark.name in PARTS:
            require(mark.name)


@pytest.fixture(autouse=True)
def _private_home_per_test(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A home, config, state, cache and data directory of the test's own, inherited by the processes it starts (so a
    test's CLI run and its in-process run share them, and no two tests, on one worker or two, ever do); and the guard
    that fails the test if it touched the real home without saying it means to."""
    own = Path(tempfile.mkdtemp(prefix="home-", dir=_SUITE_HOME[0])) if _SUITE_HOME else tmp_path_factory.mktemp("home")
    for name, value in _private_homes(own).items():
        monkeypatch.setenv(name, value)
    running(request.node)
    guard = _GUARD
    if guard is None or request.node.get_closest_marker("real_home") is not None:
        yield
        running(None)
        return
    guard.take()
    guard.active = True
    try:
        yield
    finally:
        guard.active = False
        running(None)
    touched = guard.take()
    if touched:
        shown = "\n  ".join(dict.fromkeys(touched))
        pytest.fail(
            f"this test touched the real home {REAL_HOME} (tests run with a private HOME and XDG directories; mark "
            f"the test real_home if it means to, and take the path from tests.support.real_home.REAL_HOME):\n  "
            f"{shown}",
            pytrace=False,
        )


# The benchmark fixture tasks hold their own seed tests, which fail on purpose until a task is solved.
collect_ignore_glob = ["fixtures/*"]
