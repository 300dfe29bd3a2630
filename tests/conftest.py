"""Hypothesis profiles.

The suite is a regression gate, so by default the property tests draw the same examples on every run (``derandomize``):
a commit that passed passes again. Exploration is a separate, deliberate run with fresh random examples and many more
of them::

    HYPOTHESIS_PROFILE=explore .venv/bin/pytest tests -p no:cacheprovider -q

Whatever it finds belongs in the test as an ``@example``, so the default run holds it from then on.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
