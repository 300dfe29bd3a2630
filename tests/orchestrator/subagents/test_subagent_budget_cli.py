"""Issue 43 build 5 (found item 9): a subagent's requests are charged to ``reasonix -p --max-budget-usd`` and appear
in ``total_cost_usd``. The real CLI against ``reasonix emulate``: the parent calls the ``task`` tool once, and the
subagent would read files forty times."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.orchestrator.run_support import ROOT, clean_env, emulator_process, emulator_stats, json_lines
from tests.support.subagents import subagent_workspace, task_call

PRICES = {"hit": 0.006, "miss": 0.30, "output": 1.20}
"""Flash at its peak prices, flat (USD per 1M tokens): the cap must bite at any hour."""
READS = 40


def _script() -> dict[str, Any]:
    searches = [{"tool_calls": [{"name": "grep", "arguments": {"pattern": f"x_{n}"}}]} for n in range(READS)]
    sub = {
        "key": "sub-a",
        "system_contains": "REVIEWER-MARK",
        "user_contains": "TASK-A",
        "replies": [*searches, {"content": "REPORT-A: a.py is fine."}],
    }
    parent = {"key": "executor", "replies": [{"tool_calls": [task_call("a")]}, {"content": "done"}]}
    return {"sessions": [sub, parent]}


def _print(ws: Path, url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    where = ["--workspace", str(ws), "--base-url", url]
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "-p", "review a.py", "--output-format", "json", *args, *where],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=ROOT,
    )


def _setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ws, env = subagent_workspace(tmp_path, limit=100), clean_env(tmp_path)
    config = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[prices.families.flash]\n" + "".join(f"{k} = {v}\n" for k, v in PRICES.items()))
    return ws, env


def _cost(stats: dict[str, Any]) -> float:
    """What the emulator's counted tokens cost at :data:`PRICES`."""
    total = stats["total"]
    return (
        total["hit_tokens"] * PRICES["hit"]
        + total["miss_tokens"] * PRICES["miss"]
        + total["completion_tokens"] * PRICES["output"]
    ) / 1e6


def test_a_subagents_requests_count_against_max_budget_usd(tmp_path: Path) -> None:
    ws, env = _setup(tmp_path)
    cap = 0.001
    with emulator_process(_script(), tmp_path, env) as url:
        proc = _print(ws, url, env, "--max-budget-usd", str(cap))
        stats = emulator_stats(url)
    (result,) = json_lines(proc.stdout)
    assert result["subtype"] == "error_max_budget_usd", (proc.stderr, stats["sessions"])
    sub = stats["sessions"]["sub-a"]["requests"]
    assert 1 <= sub < READS // 2  # the subagent was stopped long before its forty searches
    assert result["total_cost_usd"] <= cap
    assert abs(result["total_cost_usd"] - _cost(stats)) < 1e-6  # every request counted, the subagent's too


def test_total_cost_usd_includes_the_subagent(tmp_path: Path) -> None:
    ws, env = _setup(tmp_path)
    with emulator_process(_script(), tmp_path, env) as url:
        proc = _print(ws, url, env)
        stats = emulator_stats(url)
    (result,) = json_lines(proc.stdout)
    assert result["subtype"] == "success", proc.stderr
    assert stats["sessions"]["sub-a"]["requests"] == READS + 1
    assert abs(result["total_cost_usd"] - _cost(stats)) < 1e-6
