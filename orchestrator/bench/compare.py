"""``reasonix bench compare A.jsonl B.jsonl``: the tasks both runs share, which changed, and an exact McNemar test.

McNemar's test looks only at the discordant pairs: ``b`` tasks A solved and B did not, ``c`` the other way. Under
the null hypothesis (A and B are equally good) each discordant task is a fair coin, so the exact two-sided p-value is
``min(1, 2 · P(X ≤ min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``.
"""

from __future__ import annotations

from math import comb

from pydantic import BaseModel, ConfigDict

from orchestrator.bench.results import TaskResult


def mcnemar_exact(b: int, c: int) -> float:
    """The exact two-sided McNemar p-value for ``b`` and ``c`` discordant pairs (1.0 when there are none)."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts are never negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    return float(min(1.0, 2 * tail / 2**n))


class TaskDiff(BaseModel):
    model_config = ConfigDict(frozen=True)
    task: str
    task_class: str
    solved_a: bool
    solved_b: bool
    cost_a: float
    cost_b: float
    hit_ratio_a: float
    hit_ratio_b: float

    @property
    def change(self) -> str:
        if self.solved_a == self.solved_b:
            return "same"
        return "lost" if self.solved_a else "gained"


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)
    tasks: tuple[TaskDiff, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    solved_a: int
    solved_b: int
    b: int
    """Solved by A only."""
    c: int
    """Solved by B only."""
    p_value: float
    cost_a: float
    cost_b: float


def compare(a: list[TaskResult], b: list[TaskResult]) -> Comparison:
    """The comparison of two results files' clean runs, paired by task name."""
    ra = {r.task: r for r in a if r.fault is None}
    rb = {r.task: r for r in b if r.fault is None}
    shared = sorted(ra.keys() & rb.keys())
    diffs = tuple(
        TaskDiff(
            task=name,
            task_class=ra[name].task_class,
            solved_a=ra[name].solved,
            solved_b=rb[name].solved,
            cost_a=ra[name].cost_usd,
            cost_b=rb[name].cost_usd,
            hit_ratio_a=ra[name].cache_hit_ratio,
            hit_ratio_b=rb[name].cache_hit_ratio,
        )
        for name in shared
    )
    only_a_solved = sum(1 for d in diffs if d.solved_a and not d.solved_b)
    only_b_solved = sum(1 for d in diffs if d.solved_b and not d.solved_a)
    return Comparison(
        tasks=diffs,
        only_a=tuple(sorted(ra.keys() - rb.keys())),
        only_b=tuple(sorted(rb.keys() - ra.keys())),
        solved_a=sum(1 for d in diffs if d.solved_a),
        solved_b=sum(1 for d in diffs if d.solved_b),
        b=only_a_solved,
        c=only_b_solved,
        p_value=mcnemar_exact(only_a_solved, only_b_solved),
        cost_a=round(sum(d.cost_a for d in diffs), 6),
        cost_b=round(sum(d.cost_b for d in diffs), 6),
    )
