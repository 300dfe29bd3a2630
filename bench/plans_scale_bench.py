"""How plan reading, validation and scheduling grow with the plan: 100, 1,000 and 10,000 steps (the most a plan may
have, ``plans.limits.MAX_PLAN_STEPS``). Prints milliseconds per operation (best of N runs) for two shapes:

* ``chain``: each step depends on the one before (the worst case for depth: 10,000 waves);
* ``dag``: the seeded random DAG of ``bench/plans_bench.py`` (up to 3 dependencies among the 40 steps before).

    .venv/bin/python bench/plans_scale_bench.py [--sizes 100 1000 10000] [--runs 3]

``schedule whole run`` follows a run step by step with ``PlanGraph.schedule()`` (mark each ready step done until none
is left): linear in the plan's size. ``rebuild per step`` is what rebuilding the graph after every step costs (the old
way, quadratic), measured at 100 steps (and 1,000 with ``--old``: over a minute).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from plans_bench import make_plan  # bench/ is on the path: this script runs from there

from plans import Plan, PlanGraph, StepStatus, find_issues
from plans.loader import load_plan_file


def chain(n: int) -> Plan:
    steps = [
        {
            "id": f"S{i}",
            "title": f"step {i}",
            "instructions": "change one module and keep the tests green",
            "depends_on": [f"S{i - 1}"] if i > 1 else [],
            "writes": [f"src/mod{i}.py"],
        }
        for i in range(1, n + 1)
    ]
    return Plan.model_validate({"objective": "a long chain", "steps": steps})


def best_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def run_schedule(plan: Plan) -> int:
    schedule = PlanGraph(plan).schedule()
    done = 0
    while (sid := schedule.next()) is not None:
        schedule.set_status(sid, StepStatus.DONE)
        done += 1
    assert done == len(plan.steps)
    return done


def rebuild_per_step(plan: Plan) -> int:
    statuses: dict[str, StepStatus] = {}
    while ready := PlanGraph(plan).ready(statuses):
        statuses[ready[0]] = StepStatus.DONE
    assert len(statuses) == len(plan.steps)
    return len(statuses)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old", action="store_true", help="also time rebuilding per step at 1,000 steps (minutes)")
    args = parser.parse_args()
    print(f"{'shape':<6} {'steps':>6}  {'operation':<24} {'best ms':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape, make in (("chain", chain), ("dag", make_plan)):
            for n in args.sizes:
                plan = make(n)
                path = Path(tmp) / f"{shape}{n}.json"
                path.write_text(json.dumps(plan.model_dump(mode="json")))
                graph = PlanGraph(plan)
                rows: list[tuple[str, Callable[[], object]]] = [
                    ("load file", lambda p=path: load_plan_file(p)),  # type: ignore[misc]
                    ("find_issues", lambda p=plan: find_issues(p)),  # type: ignore[misc]
                    ("PlanGraph (validates)", lambda p=plan: PlanGraph(p)),  # type: ignore[misc]
                    ("generations", graph.generations),
                    ("critical_path", graph.critical_path),
                    ("schedule whole run", lambda p=plan: run_schedule(p)),  # type: ignore[misc]
                    ("depends_on (closure)", lambda p=plan: PlanGraph(p).depends_on(p.steps[-1].id, p.steps[0].id)),  # type: ignore[misc]
                ]
                if n <= (1000 if args.old else 100):
                    rows.append(("rebuild per step (old)", lambda p=plan: rebuild_per_step(p)))  # type: ignore[misc]
                for label, fn in rows:
                    runs = 1 if label.endswith("(old)") else args.runs
                    print(f"{shape:<6} {n:>6}  {label:<24} {best_ms(fn, runs):>10.1f}", flush=True)


if __name__ == "__main__":
    main()
