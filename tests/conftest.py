"""Hypothesis profiles.

The suite is a regression gate, so by default the property tests draw the same examples on every run (``derandomize``):
a commit that passed passes again. Exploration is a separate, deliberate run with fresh random examples and many more
of them::

    HYPOTHESIS_PROFILE=explore .venv/bin/pytest tests -p no:cacheprovider -q

Whatever it finds belongs in the test as an ``@example``, so the default run holds it from then on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def _private_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Reasonix keeps checkpoint stores under ``$XDG_STATE_HOME``: the suite gets its own, never the real home's (one
    per session, inherited by the processes tests start, so a test's CLI run and its in-process run share it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))
        yield
