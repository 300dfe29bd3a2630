"""Permission rules through the CLI, as an attacker's scripted replies tried them: `reasonix run` against the
emulator, the rules in the user's own config, and canary files that must not appear."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.orchestrator.run_support import clean_env, emulator_process, reasonix
from tests.support.bwrap import require_bwrap

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

RIDE_ALONG = [
    "git status ${x:-$(touch P1)}",
    "cat <<EOF\n$(touch P2)\nEOF",
    'git status "${x:-`touch P3`}"',
    "git status > P4",
    "git status ${a[$(touch P5)]}",
    "git status ${PATH/x/$(touch P6)}",
    "git status $(( $(touch P7) ))",
    "git status && touch P8",
]
WRAPPED_RM = [
    "FOO=1 rm k1",
    "command rm k2",
    "\\rm k3",
    "/bin/rm k4",
    "env rm k5",
    "bash -c 'rm k6'",
    "find . -name k7 -exec rm {} \\;",
    "echo k8 | xargs rm",
    "eval 'rm k9'",
    "timeout 5 rm k10",
]


def _run(
    tmp_path: Path, config: str, commands: list[str], *flags: str, seed: tuple[str, ...] = ()
) -> tuple[Path, list[str]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for name in seed:
        (ws / name).write_text("kept")
    env = clean_env(tmp_path)
    user = Path(env["XDG_CONFIG_HOME"]) / "reasonix"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(config)
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": c}}]} for c in commands]
    script = {"sessions": [{"key": "executor", "replies": [*replies, {"content": "done"}]}]}
    with emulator_process(script, tmp_path, env) as url:
        proc = reasonix("run", "go", "--workspace", str(ws), "--base-url", url, "--json", *flags, env=env)
    assert proc.returncode == 0, proc.stderr
    journal = next(ws.glob(".reasonix/runs/*/executor.jsonl")).read_text().splitlines()
    messages = [json.loads(entry["raw"]) for entry in map(json.loads, journal) if entry.get("t") == "msg"]
    results = [str(m["content"]) for m in messages if m["role"] == "tool"]
    return ws, results


def test_an_allow_rule_lets_nothing_ride_along(tmp_path: Path) -> None:
    config = '[permissions]\nallow = ["bash(git status:*)"]\n'
    ws, results = _run(tmp_path, config, ["git status", *RIDE_ALONG], "--permissions", "ask")
    assert [p.name for p in ws.iterdir() if p.name.startswith("P")] == []
    assert len(results) == 1 + len(RIDE_ALONG)
    assert "needs approval" not in results[0]  # the command the rule names runs
    assert all("needs approval" in r for r in results[1:]), results


@pytest.mark.bwrap
def test_deny_rules_see_through_wrappers(tmp_path: Path) -> None:
    require_bwrap()  # auto runs sandboxed commands unasked: only the deny rule stands between them and the files
    keep = tuple(f"k{i}" for i in range(1, len(WRAPPED_RM) + 1))
    config = '[permissions]\ndeny = ["bash(rm:*)"]\n'
    commands = [*WRAPPED_RM, "rm -f nothing-here; touch ran"]
    ws, results = _run(tmp_path, config, commands, "--permissions", "auto", seed=keep)
    assert len(results) == len(commands) and all("in [permissions] deny" in r for r in results), results
    assert all((ws / name).read_text() == "kept" for name in keep)
    assert not (ws / "ran").exists()
