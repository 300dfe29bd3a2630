"""``bench/parallel_bench.py`` drives a real goal: its diamond script completes with ``parallel = 1`` and
``parallel = 4`` (no latency model here, and no timed assertion), writes every file, sends the same number of
requests either way, and every fork's first request reuses the executor's whole cached prefix."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "parallel_bench.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parallel_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["parallel_bench"] = module
    spec.loader.exec_module(module)
    return module


async def test_the_diamond_runs_one_step_at_a_time(bench: ModuleType) -> None:
    result = await bench.run_goal(1, None, 5, 2)
    assert result.status == "complete" and result.files_ok
    assert result.requests == 2 + 2 + 4 * 3 + 2  # planner, a, four branches of 2 working replies + report, d
    assert result.forks == []


async def test_the_diamond_runs_four_wide_and_every_fork_starts_on_the_executors_prefix(bench: ModuleType) -> None:
    result = await bench.run_goal(4, None, 5, 2)
    assert result.status == "complete" and result.files_ok
    assert result.requests == 18
    assert sorted(sid for sid, *_ in result.forks) == ["b1", "b2", "b3", "b4"]
    for _sid, hit, prompt, prefix in result.forks:
        assert prefix > 0 and hit >= prefix and prompt > hit
