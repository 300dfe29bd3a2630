"""Validating and scheduling a 500-step plan: prints milliseconds per operation (median and best of N runs).

    .venv/bin/python bench/plans_bench.py [--steps 500] [--runs 20]

The plan is a seeded random DAG: each step depends on up to 3 of the 40 steps before it, reads two files, writes its
own file, and every 25th step writes a glob of its own (so the write-conflict check compares globs with all writes).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from plans import Plan, PlanGraph, StepStatus, find_issues, read_plan
from plans.render import prompt_text
from plans.storage import dump_plan


def make_plan(n: int, seed: int = 5) -> Plan:
    rng = random.Random(seed)
    steps = []
    for i in range(n):
        window = list(range(max(0, i - 40), i))
        deps = sorted(rng.sample(window, min(len(window), rng.randint(0, 3))))
        writes = [f"src/pkg{i % 20}/mod{i}.py"]
        if i % 25 == 24:
            writes = [f"docs/part{i}/*.md"]  # a glob: compared against every other write
        steps.append(
            {
                "id": f"S{i + 1}",
                "title": f"step {i + 1}",
                "instructions": f"change module {i} and keep the tests green",
                "depends_on": [f"S{j + 1}" for j in deps],
                "reads": [f"src/pkg{rng.randrange(20)}/mod{rng.randrange(n)}.py" for _ in range(2)],
                "writes": writes,
                "acceptance": ["tests pass"],
                "verify": [{"command": f"pytest -q tests/test_mod{i}.py", "timeout_s": 120}],
            }
        )
    return Plan.model_validate({"objective": "a large refactoring", "steps": steps})


def measure(label: str, fn: Callable[[], object], runs: int) -> None:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    print(f"{label:<44} median {statistics.median(times):8.2f} ms   best {min(times):8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    plan = make_plan(args.steps)
    text = dump_plan(plan)
    assert find_issues(plan) == [], find_issues(plan)[:3]
    graph = PlanGraph(plan)
    half = {sid: StepStatus.DONE for sid in graph.order()[: args.steps // 2]}
    edges = sum(len(s.depends_on) for s in plan.steps)
    print(
        f"plan: {len(plan.steps)} steps, {edges} dependencies, {len(text)} bytes of JSON, "
        f"{len(graph.generations())} waves, critical path {len(graph.critical_path())} steps, "
        f"{len(graph.parallel_pairs())} parallel pairs"
    )
    measure("parse JSON (strict)", lambda: Plan.model_validate_json(text), args.runs)
    measure("parse JSON (lenient reader)", lambda: read_plan(text), args.runs)
    measure("validate (find_issues)", lambda: find_issues(plan), args.runs)
    measure("build PlanGraph (validates)", lambda: PlanGraph(plan), args.runs)
    measure(
        "order + generations + critical path",
        lambda: (graph.order(), graph.generations(), graph.critical_path()),
        args.runs,
    )
    measure("ready set (half done)", lambda: graph.ready(half), args.runs)
    measure("parallel pairs", graph.parallel_pairs, args.runs)
    measure("validate + schedule, end to end", lambda: _end_to_end(text, half), args.runs)
    measure("prompt text", lambda: prompt_text(plan), args.runs)


def _end_to_end(text: str, statuses: dict[str, StepStatus]) -> None:
    g = PlanGraph(Plan.model_validate_json(text))
    g.generations()
    g.critical_path()
    g.ready(statuses)


if __name__ == "__main__":
    main()
