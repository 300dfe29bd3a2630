"""Running a suite: every task's clean run, then, with ``--faults``, one run per fault kind, ``jobs`` at a time
(one after another by default), each result handed on as it arrives."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio

from orchestrator.bench.results import TaskResult
from orchestrator.bench.run import BenchOptions, run_task, warm_up
from orchestrator.bench.task import Task
from sessions.wire import DeepSeekClient


async def run_suite(
    tasks: Sequence[Task],
    options: BenchOptions,
    *,
    faults: Sequence[str] = (),
    jobs: int = 1,
    client: DeepSeekClient | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
) -> list[TaskResult]:
    """Every (task, fault) run, the clean ones (``fault`` None) first; results in the order the runs were listed."""
    runs: list[tuple[Task, str | None]] = [(t, None) for t in tasks] + [(t, f) for f in faults for t in tasks]
    results: list[TaskResult | None] = [None] * len(runs)
    limiter = trio.CapacityLimiter(max(jobs, 1))

    async def one(index: int, task: Task, fault: str | None) -> None:
        async with limiter:
            result = await run_task(task, options, fault=fault, client=client)
        results[index] = result
        if on_result is not None:
            on_result(result)

    if options.mode == "oracle":
        await warm_up()
    if jobs <= 1:  # one after another, in the listed order
        for index, (task, fault) in enumerate(runs):
            await one(index, task, fault)
        return [r for r in results if r is not None]
    async with trio.open_nursery() as nursery:
        for index, (task, fault) in enumerate(runs):
            nursery.start_soon(one, index, task, fault)
    return [r for r in results if r is not None]
