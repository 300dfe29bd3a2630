"""How many examples a property test of the repair layer draws."""

from __future__ import annotations

import os

from hypothesis import settings


def examples(n: int) -> int:
    """``n``, or the mutation profile's count under bench/mutation_score.py: an explicit ``max_examples`` overrides
    the loaded profile, and each mutant reruns every property that calls it."""
    if os.environ.get("HYPOTHESIS_PROFILE") == "mutation":
        return min(n, settings.get_profile("mutation").max_examples)
    return n
