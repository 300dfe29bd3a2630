"""Issue 43 through the real CLI: ``reasonix -p`` against a real ``reasonix emulate`` with scripted tool calls, the
real bubblewrap running the model's bash. Sandboxed bash plants a skill linked to the user's config; the model reads
a kept output as ``~outputs/NAME``, loads the skill and writes ``.git/config``; a FIFO ``AGENTS.md`` and a
``REASONIX.md`` linked to ``/dev/zero`` wait at session start. Each fails on 05d9218 (a crash on ``~outputs``, the
key in a tool result, ``.git/config`` written; a hang or memory exhausted at start)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.bwrap import require_bwrap

from ..run_support import ROOT, clean_env, emulator_process, json_lines

SECRET = "api_key = 'sk-SECRET-43-cli'\n"
FSMONITOR = '[core]\n\tfsmonitor = "touch /tmp/pwned-43"\n'


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 1024**3, 4 * 1024**3))


def _print(ws: Path, url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``reasonix -p`` under a 4 GiB address-space limit (a reader of /dev/zero fails there, not on this machine),
    bounded generously in time (a hang is a failure, not a stuck test run)."""
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "-p", "go", "--output-format", "stream-json", "--workspace", str(ws),
         "--base-url", url],
        capture_output=True, text=True, env=env, timeout=120, cwd=ROOT, input="", preexec_fn=_limit_memory,
    )  # fmt: skip


def _script(*replies: dict[str, Any]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": list(replies)}]}


def _call(tool: str, call_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"name": tool, "arguments": arguments}
    if call_id is not None:
        call["id"] = call_id
    return {"tool_calls": [call]}


def _tool_results(stdout: str) -> list[str]:
    results = []
    for line in json_lines(stdout):
        if line["type"] == "user":
            results += [str(part["content"]) for part in line["message"]["content"] if part["type"] == "tool_result"]
    return results


@pytest.mark.bwrap
def test_kept_outputs_links_out_and_git_config_through_the_cli(tmp_path: Path) -> None:
    require_bwrap()
    env = clean_env(tmp_path)
    config = Path(env["XDG_CONFIG_HOME"]) / "reasonix"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(SECRET)
    ws = tmp_path / "ws"
    (ws / ".claude" / "skills" / "honest").mkdir(parents=True)
    (ws / ".claude" / "skills" / "honest" / "SKILL.md").write_text("---\ndescription: fine\n---\nDo it well.\n")
    subprocess.run(["git", "init", "--quiet", str(ws)], check=True, timeout=60)
    git_config = (ws / ".git" / "config").read_bytes()
    plant = f"seq 1 30000; mkdir -p .claude/skills/k && ln -s {config / 'config.toml'} .claude/skills/k/SKILL.md"
    script = _script(
        _call("bash", "call_00_kept", command=plant),
        _call("read_file", path="~outputs/0000-call_00_kept.txt", end_line=3),
        _call("read_file", path="~nosuchuser/x"),
        _call("skill", name="k"),
        _call("write_file", path=".git/config", content=FSMONITOR),
        _call("write_file", path="sub/.git/hooks/post-checkout", content="#!/bin/sh\n"),
        {"content": "Done."},
    )
    with emulator_process(script, tmp_path, env) as url:
        proc = _print(ws, url, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    planted, kept, tilde, skill, git, nested = _tool_results(proc.stdout)
    assert (ws / ".claude" / "skills" / "k" / "SKILL.md").is_symlink(), planted  # the sandbox made the link
    assert kept.startswith("1\t1\n2\t2\n3\t3\n")
    assert "is not expanded here" in tilde
    assert "sk-SECRET" not in proc.stdout
    assert skill == "no skill named 'k'; the skills are: honest"
    assert git.startswith("refused:") and nested.startswith("refused:")
    assert (ws / ".git" / "config").read_bytes() == git_config
    assert not (ws / "sub").exists()


def test_a_fifo_agents_md_and_a_reasonix_md_linked_to_dev_zero_do_not_stop_a_session(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)  # ends the upward search for memory files here
    os.mkfifo(ws / "AGENTS.md")
    (ws / "REASONIX.md").symlink_to("/dev/zero")
    (ws / "REASONIX.local.md").write_text("Answer briefly.\n")
    with emulator_process(_script({"content": "Done."}), tmp_path, env) as url:
        try:
            proc = _print(ws, url, env)
        except subprocess.TimeoutExpired:
            raise AssertionError("the session hung at its start on the memory files") from None
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json_lines(proc.stdout)[-1]["result"] == "Done."
