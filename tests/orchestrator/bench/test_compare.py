"""The exact McNemar p-value against a brute-force enumeration of every outcome of the discordant pairs, and the
pairing of two results files by task."""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.bench.compare import compare, mcnemar_exact
from orchestrator.bench.results import TaskResult


def brute_force(b: int, c: int) -> float:
    """Every way n = b + c fair coins can fall; the share at least as unbalanced as what was seen."""
    n = b + c
    seen = abs(b - c)
    extreme = sum(1 for flips in product((0, 1), repeat=n) if abs(2 * sum(flips) - n) >= seen)
    return float(extreme / 2**n)


@settings(deadline=None)
@given(st.integers(0, 6), st.integers(0, 6))
def test_the_exact_p_value_is_the_share_of_outcomes_at_least_as_extreme(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(brute_force(b, c), abs=1e-12)


@given(st.integers(0, 60), st.integers(0, 60))
def test_the_p_value_is_symmetric_and_a_probability(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert p == mcnemar_exact(c, b)
    assert 0 < p <= 1
    if b == c:
        assert p == 1.0


def test_known_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 0) == 0.125
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)  # 2 * (1 + 7) / 128


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def _r(task: str, solved: bool, fault: str | None = None) -> TaskResult:
    return TaskResult(task=task, task_class="fix", mode="oracle", status="complete", solved=solved, fault=fault)


def test_compare_pairs_clean_runs_by_task_and_counts_the_discordant_ones() -> None:
    a = [_r("x", True), _r("y", True), _r("z", False), _r("x", False, fault="drop")]
    b = [_r("x", True), _r("y", False), _r("z", True), _r("w", True)]
    result = compare(a, b)
    assert [(d.task, d.change) for d in result.tasks] == [("x", "same"), ("y", "lost"), ("z", "gained")]
    assert (result.b, result.c, result.solved_a, result.solved_b) == (1, 1, 2, 2)
    assert result.only_b == ("w",) and result.only_a == ()
    assert result.p_value == 1.0
