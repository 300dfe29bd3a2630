"""Hypothesis strategies for plans: random DAGs (shuffled into document order), random digraphs, random statuses."""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis import strategies as st

from plans import Plan, Risk, Step, StepStatus

STATUSES = list(StepStatus)


def examples(count: int) -> int:
    """``count`` examples, but the ``mutation`` profile's few when bench/mutation_score.py runs the tests once per
    mutant (an explicit count would otherwise override the profile and make each mutant's run take seconds)."""
    if os.environ.get("HYPOTHESIS_PROFILE") == "mutation":
        return min(count, settings.get_profile("mutation").max_examples)
    return count


def step(sid: str, deps: list[str], **extra: object) -> Step:
    return Step.model_validate(
        {"id": sid, "title": f"do {sid}", "instructions": f"work on {sid}", "depends_on": deps, **extra}
    )


@st.composite
def dag_plans(draw: st.DrawFn, max_steps: int = 14, statuses: bool = False) -> Plan:
    """A valid plan: step j may depend only on steps created before it; the document order is then shuffled."""
    n = draw(st.integers(1, max_steps))
    ids = [f"S{k}" for k in draw(st.lists(st.integers(0, 999), min_size=n, max_size=n, unique=True))]
    steps = []
    for j, sid in enumerate(ids):
        deps = draw(st.lists(st.sampled_from(ids[:j]), unique=True, max_size=4)) if j else []
        extra: dict[str, object] = {}
        if statuses:
            extra["status"] = draw(st.sampled_from(STATUSES))
        steps.append(step(sid, deps, **extra))
    order = draw(st.permutations(steps))
    return Plan(objective="random dag", steps=tuple(order))


@st.composite
def digraph_plans(draw: st.DrawFn, max_steps: int = 10, force_cycle: bool = False) -> Plan:
    """Any dependency relation without self-loops; with ``force_cycle`` a cycle is planted among 2+ steps."""
    n = draw(st.integers(2, max_steps))
    ids = [f"S{k}" for k in range(n)]
    deps: dict[str, set[str]] = {sid: set() for sid in ids}
    for sid in ids:
        deps[sid] |= set(draw(st.lists(st.sampled_from([x for x in ids if x != sid]), max_size=3)))
    if force_cycle:
        ring = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=n, unique=True))
        for a, b in zip(ring, [*ring[1:], ring[0]], strict=True):
            deps[a].add(b)
    order = draw(st.permutations(ids))
    return Plan(objective="random graph", steps=tuple(step(sid, sorted(deps[sid])) for sid in order))


def random_fields() -> st.SearchStrategy[dict[str, object]]:
    """Planner-written fields drawn from small alphabets, so that two draws are often equal."""
    return st.fixed_dictionaries(
        {
            "title": st.sampled_from(["a", "b"]),
            "instructions": st.sampled_from(["x", "y"]),
            "reads": st.lists(st.sampled_from(["r1", "r2"]), max_size=2).map(tuple),
            "acceptance": st.lists(st.sampled_from(["ok", "fast"]), max_size=2).map(tuple),
            "risk": st.sampled_from(list(Risk)),
            "needs_pro": st.booleans(),
        }
    )
