"""The largest plan that ``plans`` reads: bounds that keep every check and every schedule fast and a file's errors
clear.

* :data:`MAX_PLAN_STEPS`: 10,000 steps. Validation and scheduling are linear in the plan's size (steps plus
  dependencies); ``bench/plans_scale_bench.py`` measures them at 100, 1,000 and 10,000 steps.
* :data:`MAX_PLAN_BYTES`: 16 MB for a plan file (10,000 verbose steps take about 5 MB).
* JSON nested deeper than Python can decode (about 1,000 levels; a plan needs five) is refused as such, never a
  ``RecursionError``.
"""

from __future__ import annotations

MAX_PLAN_STEPS = 10_000
MAX_PLAN_BYTES = 16_000_000


def too_many_steps(count: int) -> str:
    return f"the plan has {count:,} steps; the most a plan may have is {MAX_PLAN_STEPS:,}: split the work into goals"
