"""Hooks through the real CLI against ``reasonix emulate``: trust, ``reasonix hooks list`` and a blocking hook."""

from __future__ import annotations

import json
from pathlib import Path

from ..run_support import clean_env, emulator_process, json_lines, reasonix

SCRIPT = {
    "sessions": [
        {
            "key": "executor",
            "replies": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                {"content": "Done."},
            ],
        }
    ]
}
HOOKS = """\
[[hooks]]
event = "pre_tool"
matcher = "bash"
command = "touch hook-ran; echo 'bash is closed today' >&2; exit 2"
timeout_s = 10
"""


def _workspace(tmp_path: Path, config: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "reasonix.toml").write_text(config)
    return ws


def test_an_untrusted_workspaces_hooks_do_not_run_until_it_is_trusted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, HOOKS)
    env = clean_env(tmp_path)
    args = ("run", "say hi", "--workspace", str(ws), "--json")
    with emulator_process(SCRIPT, tmp_path, env) as url:
        refused = reasonix(*args, "--base-url", url, env=env)
        assert refused.returncode == 2
        assert "hooks" in refused.stderr and "reasonix trust" in refused.stderr
        assert not (ws / "hook-ran").exists()
        listing = reasonix("hooks", "list", "--workspace", str(ws), env=env)
        assert listing.returncode == 2 and "not trusted" in listing.stderr

        assert reasonix("trust", "--workspace", str(ws), env=env).returncode == 0
        listing = reasonix("hooks", "list", "--workspace", str(ws), "--json", env=env)
        assert listing.returncode == 0, listing.stderr
        [hook] = json.loads(listing.stdout)
        assert hook["event"] == "pre_tool" and hook["source"] == str(ws / "reasonix.toml")
        ran = reasonix(*args, "--base-url", url, env=env)
    assert ran.returncode == 0, ran.stderr
    assert (ws / "hook-ran").exists()
    finished = [e for e in json_lines(ran.stdout) if e.get("kind") == "tool_finished"]
    assert finished[0]["is_error"] and finished[0]["preview"] == "refused by a pre_tool hook: bash is closed today"


def test_a_workspace_cannot_unsandbox_its_hooks_even_trusted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, HOOKS + "sandbox = false\n")
    env = clean_env(tmp_path)
    assert reasonix("trust", "--workspace", str(ws), env=env).returncode == 0
    listing = reasonix("hooks", "list", "--workspace", str(ws), env=env)
    assert listing.returncode == 2 and "only your user config" in listing.stderr
