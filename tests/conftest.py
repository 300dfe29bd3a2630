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
import signal
from collections.abc import Iterator

import pytest
from hypothesis import settings

# A suite started in the background of a non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and so would
# every reasonix the tests start: their Ctrl-C tests would wait forever. The tests send Ctrl-C on purpose, so give the
# process (and through it each child) SIGINT back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile("default", derandomize=True, print_blob=True, database=None)
settings.register_profile("explore", max_examples=2000, deadline=None, print_blob=True)
# bench/mutation_score.py: each mutant runs the tests that call it, so fewer examples (still derandomized) keep a
# module's run to minutes; a mutant that only a rare example kills counts as survived.
settings.register_profile("mutation", derandomize=True, max_examples=20, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

WORKERS_PER_CPU = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers a CPU, since the tests mostly wait (an explicit number in the environment wins)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, WORKERS_PER_CPU * cpus)


@pytest.fixture(autouse=True, scope="session")
def _private_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Reasonix keeps checkpoint stores under ``$XDG_STATE_HOME`` and the user's config under ``$XDG_CONFIG_HOME``:
    the suite never touches the real home's. This one covers the session-scoped fixtures (one per xdist worker, as
    ``tmp_path_factory`` is); each test then gets its own below."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        yield


@pytest.fixture(autouse=True)
def _private_state_home_per_test(
    _private_state_home: None, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state and config home of the test's own, inherited by the processes it starts (so a test's CLI run and its
    in-process run share it, and no two tests, on one worker or two, ever do)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))


# The benchmark fixture tasks hold their own seed tests, which fail on purpose until a task is solved.
collect_ignore_glob = ["fixtures/*"]
