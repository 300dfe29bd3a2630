"""``reasonix bench check`` on a hostile suite (issue 43, found item 6): a task's ``files/`` ships a ``.git`` whose
config names an fsmonitor command and whose hooks hold a ``post-commit``, and a nested ``sub/.git`` defining a clean
filter its ``.gitattributes`` names. The seed is a fresh repository of Reasonix's own: none of them runs on the host.
Real command line, real bubblewrap for the task's scripts, real git; the proof is the markers they would create."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.bench.run import changed_paths
from orchestrator.bench.workspace import SeedGit, TaskSourceError
from tests.support.bwrap import require_bwrap

from .cli_support import SUITE, bench


def _hostile_task(suite: Path, markers: Path) -> Path:
    task = suite / "calc-mean-empty"
    shutil.copytree(SUITE / "calc-mean-empty", task)
    files = task / "files"
    git_env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for repo in (files, files / "sub"):
        repo.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=git_env)
    fsmonitor = markers / "fsmonitor.sh"
    fsmonitor.write_text(f"#!/bin/sh\ntouch {markers / 'fsmonitor-ran'}\nexit 1\n")
    fsmonitor.chmod(0o755)
    (files / ".git" / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = {fsmonitor}\n"
        f"[filter \"x\"]\n\tclean = sh -c 'touch {markers / 'filter-ran'}; cat'\n"
    )
    hook = files / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {markers / 'post-commit-ran'}\n")
    hook.chmod(0o755)
    (files / ".gitattributes").write_text("* filter=x\n")
    with (files / "sub" / ".git" / "config").open("a") as f:
        f.write(f"[filter \"x\"]\n\tclean = sh -c 'touch {markers / 'nested-filter-ran'}; cat'\n")
    (files / "sub" / "note.txt").write_text("nested\n")
    return task


@pytest.mark.bwrap
def test_check_on_a_suite_shipping_a_git_directory_runs_none_of_its_config_or_hooks(tmp_path: Path) -> None:
    require_bwrap()
    markers = tmp_path / "markers"
    markers.mkdir()
    suite = tmp_path / "suite"
    _hostile_task(suite, markers)
    done = bench("check", str(suite), cwd=tmp_path)
    assert sorted(p.name for p in markers.iterdir()) == ["fsmonitor.sh"], "the suite's git ran on the host"
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok calc-mean-empty" in done.stdout


async def test_what_the_goal_writes_into_the_seeds_git_directory_configures_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    seed = SeedGit(ws)
    await seed.init()
    await seed("add", "--all")
    await seed("commit", "--quiet", "-m", "seed")
    marker = tmp_path / "fsmonitor-ran"
    fsmonitor = tmp_path / "fsmonitor.sh"
    fsmonitor.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fsmonitor.chmod(0o755)
    # what a goal could write there (the file tools run on the host): an fsmonitor, a filter for every path
    (ws / ".git" / "config").write_text(
        f"[core]\n\tfsmonitor = {fsmonitor}\n[filter \"x\"]\n\tclean = sh -c 'touch {marker}; cat'\n"
    )
    (ws / ".gitattributes").write_text("* filter=x\n")
    (ws / "a.txt").write_text("changed\n")
    assert await changed_paths(ws) == (".gitattributes", "a.txt")
    assert not marker.exists(), "the goal's git configuration ran on the host"
    (ws / ".git" / "commondir").write_text(str(tmp_path / "elsewhere") + "\n")  # config read from elsewhere
    with pytest.raises(TaskSourceError, match="commondir"):
        await changed_paths(ws)
