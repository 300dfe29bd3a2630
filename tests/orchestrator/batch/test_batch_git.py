"""``reasonix batch`` takes a goal's diff without the goal's git configuration (issue 43, found item 3): a goal that
writes ``.gitattributes`` naming a filter and defines that filter in its copy's ``.git/config`` gets nothing run on
the host. Real process against a real ``reasonix emulate``, a real git clone as the goal's copy, real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.batch.spec import GoalSpec
from orchestrator.batch.workspace import clone, goal_diff, pack_local
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


@pytest.mark.bwrap  # the batch's goals run verify commands
def test_a_filter_the_goal_defines_in_its_copy_never_runs_when_the_batch_takes_its_diff(tmp_path: Path) -> None:
    env = {**clean_env(tmp_path), "DEEPSEEK_API_KEY": "sk-test", "XDG_STATE_HOME": str(tmp_path / "state")}
    marker = tmp_path / "filter-ran-on-the-host"
    goals = goals_file(tmp_path, ["g1"])
    with emulator_process({"sessions": _hostile_sessions("g1", marker)}, tmp_path, env) as url:
        proc = reasonix("batch", str(goals), "--base-url", url, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    # the goal wrote its copy's git configuration (until the file tools refuse .git: then the unit test below still
    # holds the diff to the rule with a planted config)
    assert not marker.exists(), "the goal's filter ran on the host when the batch took its diff"
    result = results(tmp_path / "goals.batch" / "results.jsonl")["g1"]
    assert result["status"] == "complete", result
    diff = result["diff"]
    assert "+++ b/calc/ops.py" in diff and "+def add(a, b):" in diff  # the files as they are, byte for byte
    assert "+++ b/.gitattributes" in diff and "+* filter=pwn" in diff
    assert ".git/config" not in diff


async def test_a_directory_that_is_no_repository_is_packed_without_entering_the_repositories_in_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"
    nested = root / "vendor"
    nested.mkdir(parents=True)
    marker = tmp_path / "filter-ran-on-the-host"
    git_env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def run(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=m", "-c", "user.email=m@x", *args], cwd=nested, check=True, env=git_env)

    run("init", "-q")
    run("config", "filter.x.clean", f"sh -c 'touch {marker}; cat'")
    (nested / ".gitattributes").write_text("* filter=x\n")
    (nested / "lib.py").write_text("one\n")
    run("add", "-A")
    run("commit", "-qm", "x")
    marker.unlink(missing_ok=True)  # its own commit ran it, here on purpose
    (nested / "lib.py").write_text("two\n")
    (root / "main.py").write_text("print(1)\n")
    seed = await pack_local(GoalSpec(workspace=str(root), objective="x"))
    assert not marker.exists(), "a nested repository's filter ran on the host while the batch packed the workspace"
    assert seed.bundle is not None
    dest = tmp_path / "copy"
    commit = await clone(seed, dest, "g1")
    assert commit == seed.commit
    assert (dest / "vendor" / "lib.py").read_text() == "two\n"  # its files, as content
    assert (dest / "main.py").read_text() == "print(1)\n"
    assert not (dest / "vendor" / ".git").exists()
    assert not marker.exists()


async def test_goal_diff_reads_nothing_the_copy_says_about_git(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "a.txt").write_text("a\n")
    seed = await pack_local(GoalSpec(workspace=str(user), objective="x"))
    copy = tmp_path / "copy"
    commit = await clone(seed, copy, "g1")
    marker = tmp_path / "filter-ran-on-the-host"
    (copy / ".git" / "config").write_text(CONFIG.format(marker=marker))  # what a goal could plant
    (copy / ".gitattributes").write_text("* filter=pwn diff=pwn\n")
    (copy / "a.txt").write_text("b\n")
    (copy / "new.txt").write_text("new\n")
    diff = await goal_diff(copy, commit)
    assert not marker.exists(), "the copy's .git/config ran on the host when the diff was taken"
    assert "-a\n+b" in diff and "+++ b/new.txt" in diff and "+* filter=pwn diff=pwn" in diff
