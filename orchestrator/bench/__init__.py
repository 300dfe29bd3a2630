"""The benchmark (``reasonix bench``): task suites in folders (``task.toml``, ``verify.sh``, the reference patch),
preparing each task's workspace (a pinned sdist, a pinned git commit, or files), ``check`` (the check fails on the
seed and passes on the fix, in the sandbox), running each task through the real goal loop — against the emulator with
replies derived from the reference patch (``--oracle``) or against DeepSeek —, results as JSONL with figures per class,
injected faults and what they cost, ``compare`` with an exact McNemar test, and the HTML report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.bench.check import TaskCheck, check_suite, check_task
    from orchestrator.bench.compare import compare, mcnemar_exact
    from orchestrator.bench.results import TaskResult, read_results, summarize
    from orchestrator.bench.run import BenchOptions, run_task
    from orchestrator.bench.suite import run_suite
    from orchestrator.bench.task import BenchError, Task, load_suite, load_task

__all__ = [
    "BenchError",
    "BenchOptions",
    "Task",
    "TaskCheck",
    "TaskResult",
    "check_suite",
    "check_task",
    "compare",
    "load_suite",
    "load_task",
    "mcnemar_exact",
    "read_results",
    "run_suite",
    "run_task",
    "summarize",
]

_HOME = {
    "BenchError": "task",
    "BenchOptions": "run",
    "Task": "task",
    "TaskCheck": "check",
    "TaskResult": "results",
    "check_suite": "check",
    "check_task": "check",
    "compare": "compare",
    "load_suite": "task",
    "load_task": "task",
    "mcnemar_exact": "compare",
    "read_results": "results",
    "run_suite": "suite",
    "run_task": "run",
    "summarize": "results",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
