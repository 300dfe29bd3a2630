"""``reasonix setup`` in a real pseudo-terminal against a ``reasonix emulate`` subprocess that refuses one key."""

from __future__ import annotations

import io
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from orchestrator.cli.setup_wizard import Answers, save
from orchestrator.config.model import load_config

from .run_support import ROOT, clean_env, reasonix, start_reasonix

BAD = "sk-setup-bad-key-0000"
GOOD = "sk-setup-good-key-1111"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[str]:
    proc = start_reasonix("emulate", "--port", "0", "--reject-key", BAD, env=clean_env(tmp_path))
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split()[-1]
    finally:
        proc.terminate()
        proc.wait(30)


def _spawn(tmp_path: Path, *argv: str) -> pexpect.spawn:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return pexpect.spawn(
        sys.executable,
        ["-m", "orchestrator", *argv, "--workspace", str(ws)],
        env={**clean_env(tmp_path), "TERM": "xterm"},
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 160),
    )


def test_a_bad_key_is_refused_and_asked_again_then_a_good_one_is_saved_0600(tmp_path: Path, emulator: str) -> None:
    child = _spawn(tmp_path, "setup", "--base-url", emulator)
    child.logfile_read = transcript = io.StringIO()
    child.expect("Paste your DeepSeek API key")
    child.sendline(BAD)
    child.expect(r"the API refused this key \(HTTP 401\)")
    child.expect("Paste your DeepSeek API key")  # asked again
    child.sendline(GOOD)
    child.expect("the API accepted the key; balance 42.00 USD")
    child.expect(r"Save the key in .*config.toml")
    child.sendline("")
    child.expect(r"Default preset for goals .*\[auto\]")
    child.sendline("turbo")
    child.expect("'turbo' is not one of")
    child.sendline("pro")
    child.expect(r"Sandbox for commands .*\[workspace-write\]")
    child.sendline("")
    child.expect(r"saved the key, base_url \S+, preset pro and sandbox workspace-write in .* \(mode 0600\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert GOOD not in transcript.getvalue() and BAD not in transcript.getvalue()  # pasted without echo

    path = tmp_path / ".config" / "reasonix" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved = tomllib.loads(path.read_text())
    # The URL the key was checked against is saved with it (issue 48 item 29: it was not, so the saved key was then
    # sent to DeepSeek's API, where it was never checked).
    assert saved == {
        "api_key": GOOD,
        "base_url": emulator,
        "goal": {"preset": "pro"},
        "sandbox": {"mode": "workspace-write"},
    }

    doctor = reasonix("doctor", "--workspace", str(tmp_path / "ws"), env=clean_env(tmp_path))
    assert doctor.returncode == 0, doctor.stdout
    assert f"✓ API key: set in {path} (api_key) (not shown)" in doctor.stdout
    assert "✓ balance: 42.00 USD (40.00 topped up, 2.00 granted)" in doctor.stdout
    assert GOOD not in doctor.stdout


def test_without_bubblewrap_setup_says_so_before_the_sandbox_question(tmp_path: Path, emulator: str) -> None:
    """Issue 48 item 29: setup offered and saved workspace-write without saying bubblewrap is missing."""
    ws = tmp_path / "ws"
    ws.mkdir()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "orchestrator", "setup", "--base-url", emulator, "--workspace", str(ws)],
        env={**clean_env(tmp_path), "TERM": "xterm", "PATH": str(tmp_path / "empty-path")},  # no bwrap on PATH
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 300),
    )
    child.expect("Paste your DeepSeek API key")
    child.sendline("")  # no key now
    child.expect(r"Default preset for goals .*\[auto\]")
    child.sendline("")
    child.expect("no sandbox on this machine: bwrap is not installed; install bubblewrap")
    child.expect("every command asks first")
    child.expect(r"Sandbox for commands .*\[workspace-write\]")
    child.sendline("")
    child.expect("saved base_url")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_d_ends_the_wizard_and_writes_nothing(tmp_path: Path, emulator: str) -> None:
    child = _spawn(tmp_path, "setup", "--base-url", emulator)
    child.expect("Paste your DeepSeek API key")
    child.sendcontrol("d")
    child.expect("nothing was written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert not (tmp_path / ".config" / "reasonix" / "config.toml").exists()


def test_setup_without_a_terminal_says_what_to_do_instead(tmp_path: Path) -> None:
    done = reasonix("setup", "--workspace", str(tmp_path), env=clean_env(tmp_path))
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "DEEPSEEK_API_KEY" in done.stderr


def test_saving_keeps_the_users_other_keys_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "reasonix" / "config.toml"
    path.parent.mkdir()
    path.write_text("# my settings\nthinking = false\n\n[goal]\nparallel = 2\n")
    path.chmod(0o644)
    save(path, Answers(key="sk-x", preset="flash", sandbox="read-only"))
    text = path.read_text()
    assert text.startswith('api_key = "sk-x"\n# my settings\n')
    assert tomllib.loads(text) == {
        "api_key": "sk-x",
        "thinking": False,
        "goal": {"parallel": 2, "preset": "flash"},
        "sandbox": {"mode": "read-only"},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    resolved = load_config(workspace=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert resolved.api_key == "sk-x" and resolved.sources["api_key"] == str(path)
    assert "sk-x" not in repr(resolved)


def test_a_key_in_a_workspace_file_is_refused(tmp_path: Path) -> None:
    from orchestrator.errors import ConfigError

    (tmp_path / "reasonix.toml").write_text('api_key = "sk-leak"\n')
    with pytest.raises(ConfigError, match="never in a workspace file"):
        load_config(workspace=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})


def test_the_environment_wins_over_the_saved_key(tmp_path: Path) -> None:
    save(tmp_path / "reasonix" / "config.toml", Answers(key="sk-file", preset="auto", sandbox="workspace-write"))
    resolved = load_config(workspace=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path), "DEEPSEEK_API_KEY": "sk-env"})
    assert resolved.api_key == "sk-env" and resolved.sources["api_key"] == "$DEEPSEEK_API_KEY"


def test_code_without_a_key_in_a_terminal_offers_setup(tmp_path: Path) -> None:
    child = _spawn(tmp_path, "code")
    child.expect(r"No DeepSeek API key is set \(\$DEEPSEEK_API_KEY\)\. Run reasonix setup now\? \[Y/n\]")
    child.sendline("n")
    child.expect("no API key: set DEEPSEEK_API_KEY")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
