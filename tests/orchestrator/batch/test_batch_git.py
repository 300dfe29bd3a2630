"""``reasonix batch`` takes a goal's diff without the goal's git configuration (issue 43, found item 3): a goal that
writes ``.gitattributes`` naming a filter and defines that filter in its copy's ``.git/config`` gets nothing run on
the host. Real process against a real ``reasonix emulate``, a real git clone as the goal's copy, real git."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.orchestrator.goal_support import call, reply
from tests.orchestrator.run_support import clean_env, emulator_process, reasonix
from tests.support.batch import OPS, goal_sessions, goals_file, results

CONFIG = """[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
[filter "pwn"]
\tclean = sh -c 'touch {marker}; cat'
\tsmudge = sh -c 'touch {marker}; cat'
[diff]
\texternal = sh -c 'touch {marker}'
"""


def _hostile_sessions(goal_id: str, marker: Path) -> list[dict[str, Any]]:
    planner, executor = goal_sessions(goal_id)
    executor["replies"] = [
        reply(call("write_file", path=".gitattributes", content="* filter=pwn\n")),
        reply(call("write_file", path=".git/config", content=CONFIG.format(marker=marker))),
        reply(call("write_file", path="calc/ops.py", content=OPS)),
        reply(call("report_step", step_id="S1", status="done", summary="wrote it", evidence=["wrote calc/ops.py"])),
    ]
    return [planner, executor]


def test_a_filter_the_goal_defines_in_its_copy_never_runs_when_the_batch_takes_its_diff(tmp_path: Path) -> None:
    env = {**clean_env(tmp_path), "DEEPSEEK_API_KEY": "sk-test", "XDG_STATE_HOME": str(tmp_path / "state")}
    marker = tmp_path / "filter-ran-on-the-host"
    goals = goals_file(tmp_path, ["g1"])
    with emulator_process({"sessions": _hostile_sessions("g1", marker)}, tmp_path, env) as url:
        proc = reasonix("batch", str(goals), "--base-url", url, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    copy = tmp_path / "goals.batch" / "goals" / "g1" / "workspace"
    assert "filter" in (copy / ".git" / "config").read_text()  # the goal did write its copy's git configuration
    assert not marker.exists(), "the goal's filter ran on the host when the batch took its diff"
    result = results(tmp_path / "goals.batch" / "results.jsonl")["g1"]
    assert result["status"] == "complete", result
    diff = result["diff"]
    assert "+++ b/calc/ops.py" in diff and "+def add(a, b):" in diff  # the files as they are, byte for byte
    assert "+++ b/.gitattributes" in diff and "+* filter=pwn" in diff
    assert ".git/config" not in diff
