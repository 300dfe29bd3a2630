"""A repository the model makes inside the workspace is content the checkpoint store keeps, never a repository its
git enters (issue 43, found item 2): real ``reasonix run`` against a real ``reasonix emulate``, the nested repository
made by sandboxed bash (real bubblewrap, real git), then a later ``reasonix run`` and ``reasonix undo``. The proof of a
filter run on the host is the marker it would create outside the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.bwrap import require_bwrap
from tests.support.repl_pty import executor_script, repl_workspace

from .run_support import clean_env, emulator_process, reasonix


def _bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def _nested_repo_command(marker: Path) -> str:
    """What the attack ran: a nested repository whose own config defines a clean filter every path uses, a commit,
    then a change git would have to ask that repository about."""
    return (
        "mkdir sub && cd sub && git init -q"
        f" && git config filter.x.clean \"sh -c 'touch {marker}; cat'\""
        " && echo '* filter=x' > .gitattributes && echo hi > f && git add -A"
        " && git -c user.name=m -c user.email=m@x commit -qm x && echo change >> f"
    )


@pytest.mark.bwrap
def test_a_nested_repository_filter_never_runs_on_the_host_at_a_later_turn_or_during_undo(tmp_path: Path) -> None:
    require_bwrap()
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    marker = tmp_path / "filter-ran-on-the-host"
    first = [_bash(_nested_repo_command(marker)), {"content": "Made sub."}]
    with emulator_process(executor_script(first), tmp_path, env) as url:
        done = reasonix("run", "make sub", "--workspace", str(ws), "--base-url", url, "--permissions", "auto", env=env)
    assert done.returncode == 0, done.stderr
    assert "checkpoints are off" not in done.stdout + done.stderr
    assert (ws / "sub" / ".git" / "config").is_file() and (ws / "sub" / "f").read_text() == "hi\nchange\n"
    assert not marker.exists()  # the sandbox ran the filter in its own /tmp

    (ws / "sub" / "f").write_text("hi\nchanged again\n")  # a change the next turn's checkpoint must see
    second = [_bash("echo more >> sub/f && echo note > note.txt"), {"content": "Edited."}]
    (tmp_path / "second").mkdir()
    with emulator_process(executor_script(second), tmp_path / "second", env) as url:
        later = reasonix("run", "edit", "--workspace", str(ws), "--base-url", url, "--permissions", "auto", env=env)
    assert later.returncode == 0, later.stderr
    assert "checkpoints are off" not in later.stdout + later.stderr
    assert not marker.exists(), "the nested repository's filter ran on the host at a turn checkpoint"

    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert listed.returncode == 0 and listed.stdout.count("turn-1") == 2, listed.stdout + listed.stderr
    undone = reasonix("undo", "--workspace", str(ws), env=env)
    assert undone.returncode == 0, undone.stderr + undone.stdout
    assert not marker.exists(), "the nested repository's filter ran on the host during undo"
    # the nested repository's files were stored as content: undo took back the turn's change to sub/f byte for byte
    assert (ws / "sub" / "f").read_text() == "hi\nchanged again\n"
    assert not (ws / "note.txt").exists()
    assert (ws / "sub" / ".git" / "config").is_file()  # its .git is left as it is, never entered
