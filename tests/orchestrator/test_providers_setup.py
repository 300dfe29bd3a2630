"""``reasonix setup --add-provider`` (issue 46): an OpenAI-compatible entry added from flags without a terminal, or
asked for in a real pseudo-terminal, checked against a real loopback server before it is saved, and then what
``reasonix doctor`` and the roles read."""

from __future__ import annotations

import io
import stat
import sys
import tomllib
from pathlib import Path

import pexpect

from orchestrator.cli.setup_provider import ROLES
from orchestrator.config.providers import ROLE_DEFAULTS

from .providers_support import closed_port_url, models_server
from .run_support import ROOT, clean_env, reasonix


def _config(tmp_path: Path) -> Path:
    return tmp_path / ".config" / "reasonix" / "config.toml"


def test_the_roles_setup_offers_are_the_roles_there_are() -> None:
    assert tuple(ROLE_DEFAULTS) == ROLES


def test_flags_alone_add_a_checked_entry_and_its_roles_keeping_the_file(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    path = _config(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('# mine\n[goal]\npreset = "pro"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    with models_server(200, ("local-coder",)) as (url, seen):
        proc = reasonix(
            "setup", "--workspace", str(ws), "--add-provider", "llama-local", "--provider-url", url,
            "--provider-model", "local-coder", "--free", "--context-window", "16384", "--use-for", "executor",
            env=env,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✓ reachable, local-coder listed" in proc.stdout and seen == [""]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text.startswith("# mine\n")
    saved = tomllib.loads(text)
    assert saved["goal"] == {"preset": "pro"}
    assert saved["roles"] == {"executor": "llama-local"}
    assert saved["providers"] == [
        {
            "name": "llama-local",
            "kind": "openai",
            "base_url": url,
            "model": "local-coder",
            "free": True,
            "context_window": 16384,
        }
    ]
    # added again: replaced, not doubled; the doctor reads it back
    with models_server(200, ("local-coder", "bigger")) as (url, _):
        again = reasonix(
            "setup", "--workspace", str(ws), "--add-provider", "llama-local", "--provider-url", url,
            "--provider-model", "bigger", "--prices", "0.1,0.5,2", env=env,
        )  # fmt: skip
        assert again.returncode == 0, again.stdout
        doctor = reasonix("doctor", "--workspace", str(ws), "--offline", env=env)
    saved = tomllib.loads(path.read_text())
    assert [p["model"] for p in saved["providers"]] == ["bigger"]
    assert saved["providers"][0]["prices"] == {"hit": 0.1, "miss": 0.5, "output": 2.0}
    assert "provider llama-local: openai at" in doctor.stdout and "used by executor" in doctor.stdout


def test_an_unreachable_server_is_said_and_a_missing_flag_refused_without_a_terminal(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    url = closed_port_url()
    proc = reasonix(
        "setup", "--workspace", str(ws), "--add-provider", "later", "--provider-url", url, "--provider-model", "m",
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert f"✗ cannot reach {url}/models" in proc.stdout and "saved anyway" in proc.stdout
    missing = reasonix("setup", "--workspace", str(ws), "--add-provider", "x", "--provider-url", url, env=env)
    assert missing.returncode == 2 and "--add-provider needs --provider-model" in missing.stdout
    stray = reasonix("setup", "--workspace", str(ws), "--free", env=env)
    assert stray.returncode == 2 and "go with --add-provider NAME" in stray.stderr
    bad = reasonix("setup", "--workspace", str(ws), "--add-provider", "x", "--provider-url", "ftp://h",
                   "--provider-model", "m", env=env)  # fmt: skip
    assert bad.returncode == 2 and "expected an http(s) URL" in bad.stdout
    assert [p["name"] for p in tomllib.loads(_config(tmp_path).read_text())["providers"]] == ["later"]


def test_in_a_terminal_it_asks_offers_the_listed_model_and_saves(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with models_server(200, ("qwen2.5-coder-0.5b",)) as (url, _):
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator", "setup", "--workspace", str(ws), "--add-provider", "llama-local"],
            env={**clean_env(tmp_path), "TERM": "xterm"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 160),
        )
        child.logfile_read = io.StringIO()
        child.expect("Base URL of the server")
        child.sendline(url)
        child.expect("Environment variable holding its key")
        child.sendline("")
        child.expect(r"the server lists: qwen2.5-coder-0.5b")
        child.expect(r"Model id it answers to \[qwen2.5-coder-0.5b\]")
        child.sendline("")
        child.expect("Prices: 'free'")
        child.sendline("free")
        child.expect("Use it for which roles")
        child.sendline("executor, planner")
        child.expect("✓ reachable, qwen2.5-coder-0.5b listed")
        child.expect("saved the \\[\\[providers\\]\\] entry llama-local")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0, child.logfile_read.getvalue()
    saved = tomllib.loads(_config(tmp_path).read_text())
    assert saved["roles"] == {"executor": "llama-local", "planner": "llama-local"}
    assert saved["providers"][0]["model"] == "qwen2.5-coder-0.5b" and saved["providers"][0]["free"] is True


def test_in_a_terminal_a_failed_check_is_saved_only_when_the_user_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with models_server(200, ("other",)) as (url, _):
        child = pexpect.spawn(
            sys.executable,
            [
                "-m", "orchestrator", "setup", "--workspace", str(ws), "--add-provider", "x", "--provider-url", url,
                "--provider-model", "wanted", "--free", "--use-for", "executor",
            ],
            env={**clean_env(tmp_path), "TERM": "xterm"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=60,
        )  # fmt: skip
        child.expect("Environment variable holding its key")
        child.sendline("")
        child.expect("wanted is not among the models it lists \\(other\\)")
        child.expect("Save the entry anyway")
        child.sendline("")
        child.expect("nothing was written")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 1
    assert not _config(tmp_path).exists()
