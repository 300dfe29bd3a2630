"""``reasonix doctor`` run for real: real files, a real subprocess, real loopback servers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
import trio

from orchestrator.cli.doctor_checks import probe_base_url
from orchestrator.cli.main import main

SECRET = "sk-doctor-test-secret-0123456789"
ROOT = Path(__file__).resolve().parents[2]


class _Handler(BaseHTTPRequestHandler):
    status: ClassVar[int] = 200
    seen_auth: ClassVar[list[str | None]]

    def do_GET(self) -> None:
        type(self).seen_auth.append(self.headers.get("Authorization"))
        body = json.dumps(
            {"object": "list", "data": [{"id": "deepseek-v4-flash", "object": "model"}]}
            if self.path == "/models" and self.status == 200
            else {"error": {"message": "nope"}}
        ).encode()
        self.send_response(self.status if self.path == "/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(status: int) -> Iterator[tuple[str, list[str | None]]]:
    class Handler(_Handler):
        pass

    Handler.status = status
    Handler.seen_auth = []
    handler = Handler
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.seen_auth
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def server() -> Iterator[tuple[str, list[str | None]]]:
    yield from _serve(200)


@pytest.fixture
def server_401() -> Iterator[tuple[str, list[str | None]]]:
    yield from _serve(401)


@pytest.fixture
def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean environment: no key, no base URL, an empty user config dir, a fresh workspace."""
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def doctor(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["doctor", *argv])
    out = capsys.readouterr().out
    return code, out.splitlines()


def line(lines: list[str], name: str) -> str:
    (found,) = [x for x in lines if x[2:].startswith(f"{name}:")]
    return found


# -------------------------------------------------------------------------------------------- fresh machine


def test_offline_on_a_fresh_machine_exits_0(tmp_path: Path) -> None:
    """The README's main-job command: no key, no network, no config files."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path), PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "doctor", "--offline"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert line(lines, "configuration").startswith("✓")
    assert "built-in defaults" in line(lines, "configuration")
    assert line(lines, "API key").startswith("– API key: not checked with the server (--offline)")
    assert "$DEEPSEEK_API_KEY is not set" in line(lines, "API key")
    assert line(lines, "server").startswith("– server: skipped (--offline)")
    assert line(lines, "tokenizer").startswith("✓")
    assert line(lines, "prices").startswith("✓")


def test_offline_names_the_config_file_setup_saved_the_key_in(tmp_path: Path) -> None:
    """Issue 48 item 29: after `reasonix setup` saved the key in the config, `doctor --offline` said it is read from
    the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path), PYTHONIOENCODING="utf-8")
    config = tmp_path / "xdg" / "reasonix" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('api_key = "sk-saved-by-setup"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "doctor", "--offline"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    key = line(proc.stdout.splitlines(), "API key")
    assert key == f"– API key: not checked with the server (--offline); set in {config} (api_key) (not shown)", key
    assert "sk-saved" not in proc.stdout


# ------------------------------------------------------------------------------------------------- config


def test_bad_config_names_file_and_key_and_fails(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "reasonix.toml").write_text('[client]\nstall_timeout_s = "fast"\nretries = 3\n')
    code, lines = doctor(capsys, "--offline", "--workspace", str(home))
    assert code == 1
    assert line(lines, "configuration").startswith("✗")
    text = "\n".join(lines)
    assert f'{home / "reasonix.toml"}: client.stall_timeout_s: expected a number, got "fast"' in text
    assert "client.retries: unknown key" in text
    assert f"fix: edit {home / 'reasonix.toml'}" in text
    assert line(lines, "API key").startswith("– API key: skipped: the configuration did not load")
    assert line(lines, "tokenizer").startswith("✓")  # independent checks still run


def test_config_files_are_listed(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user = tmp_path / "xdg" / "reasonix"
    user.mkdir(parents=True)
    (user / "config.toml").write_text('[models]\nflash = "deepseek-flash"\n')
    (home / "reasonix.toml").write_text("thinking = false\n")
    code, lines = doctor(capsys, "--offline", "--workspace", str(home))
    assert code == 0
    assert f"from {user / 'config.toml'}, {home / 'reasonix.toml'}" in line(lines, "configuration")
    assert "models deepseek-flash / deepseek-v4-pro" in line(lines, "configuration")


def test_unpriced_model_fails_with_the_override_to_add(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user = home.parent / "xdg" / "reasonix"  # the user's own: an untrusted workspace's model ids are ignored
    user.mkdir(parents=True)
    (user / "config.toml").write_text('[models]\npro = "deepseek-v5-pro"\n')
    code, lines = doctor(capsys, "--offline", "--workspace", str(home))
    assert code == 1
    assert line(lines, "prices").startswith("✗")
    text = "\n".join(lines)
    assert "'deepseek-v5-pro'" in text and "fix:   [prices.aliases]" in text


# ---------------------------------------------------------------------------------------------- key, server


def test_missing_key_fails_for_deepseek_and_names_the_variable(home: Path) -> None:
    from orchestrator.cli.doctor_checks import check_key
    from orchestrator.config.model import load_config

    check = check_key(load_config(workspace=home, env={}), offline=False)  # the default base URL: DeepSeek's
    assert check.status == "fail" and check.detail == "$DEEPSEEK_API_KEY is not set"
    assert any(fix.startswith("export DEEPSEEK_API_KEY=") for fix in check.fix)


def test_a_local_endpoint_needs_no_key_as_every_command_works_there(
    home: Path, server: tuple[str, list[str | None]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23 item 28: doctor against the emulator said "API key not set" though every command works there."""
    url, seen = server
    code, lines = doctor(capsys, "--workspace", str(home), "--base-url", url)
    assert code == 0, lines
    assert line(lines, "API key").startswith(f"✓ API key: $DEEPSEEK_API_KEY is not set; not needed for {url}")
    assert line(lines, "server").startswith("✓")
    assert seen == ["Bearer sk-local-placeholder"] * 2  # what every command sends there: /models, /user/balance


def test_against_the_emulator_passes_and_a_key_it_rejects_fails(tmp_path: Path) -> None:
    """``reasonix emulate --reject-key KEY`` plays DeepSeek's 401 for one key (issue 23 item 31)."""
    from .run_support import clean_env, reasonix, start_reasonix

    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    emulator = start_reasonix("emulate", "--reject-key", SECRET, env=env)
    try:
        assert emulator.stdout is not None
        url = emulator.stdout.readline().split()[-1]
        ok = reasonix("doctor", "--workspace", str(ws), "--base-url", url, env=env)
        assert ok.returncode == 0, ok.stdout
        assert "✓ balance: 42.00 USD (40.00 topped up, 2.00 granted)" in ok.stdout
        bad = reasonix("doctor", "--workspace", str(ws), "--base-url", url, env={**env, "DEEPSEEK_API_KEY": SECRET})
        assert bad.returncode == 1
        assert f"✗ server: GET {url}/models → 401: the server rejected the key" in bad.stdout
        assert "– balance: skipped: the server check failed" in bad.stdout
        run = reasonix("run", "hi", "--workspace", str(ws), "--base-url", url, env={**env, "DEEPSEEK_API_KEY": SECRET})
        assert run.returncode != 0 and "Authentication Fails" in run.stderr + run.stdout
        assert SECRET not in bad.stdout + run.stdout + run.stderr
    finally:
        emulator.terminate()
        emulator.wait(30)


def test_an_untrusted_workspace_file_is_fixed_by_trust_not_by_editing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "reasonix.toml").write_text('base_url = "http://127.0.0.1:9"\n')
    code, lines = doctor(capsys, "--offline", "--workspace", str(home))
    assert code == 1
    machine = "install bubblewrap"  # said where bubblewrap is missing, whatever the workspace
    fixes = [x.strip() for x in lines if x.strip().startswith("fix:") and machine not in x]
    assert fixes == [f"fix: check {home / 'reasonix.toml'}, then trust it as it is: reasonix trust --workspace {home}"]


def test_reachable_server_with_key_passes_and_never_prints_the_key(
    home: Path,
    server: tuple[str, list[str | None]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, seen = server
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    code, lines = doctor(capsys, "--workspace", str(home), "--base-url", url)
    assert code == 0, lines
    assert line(lines, "API key") == "✓ API key: set in $DEEPSEEK_API_KEY (not shown)"
    assert line(lines, "server") == f"✓ server: GET {url}/models → 200 (1 models: deepseek-v4-flash)"
    assert seen == [f"Bearer {SECRET}"] * 2  # /models, then /user/balance
    assert line(lines, "balance").startswith("– balance: not known: DeepSeek answered HTTP 404")  # only a warning
    assert SECRET not in "\n".join(lines)
    assert lines[-1] == "all required checks passed"


def test_base_url_from_environment_is_used(
    home: Path,
    server: tuple[str, list[str | None]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, seen = server
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    monkeypatch.setenv("DEEPSEEK_BASE_URL", url + "/")
    code, lines = doctor(capsys, "--workspace", str(home))
    assert code == 0
    assert f"base_url {url} (environment)" in line(lines, "configuration")
    assert len(seen) == 2  # /models, /user/balance


def test_unreachable_server_fails_with_a_fix(
    home: Path, closed_port_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    code, lines = doctor(capsys, "--workspace", str(home), "--base-url", closed_port_url)
    assert code == 1
    assert line(lines, "server").startswith(f"✗ server: cannot reach {closed_port_url}/models: ConnectError")
    assert f"    fix: check the network connection and base_url is {closed_port_url} (from command line)" in lines
    assert lines[-1] == "1 required check failed: server"


def test_rejected_key_fails(
    home: Path,
    server_401: tuple[str, list[str | None]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = server_401
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    code, lines = doctor(capsys, "--workspace", str(home), "--base-url", url)
    assert code == 1
    assert line(lines, "server") == f"✗ server: GET {url}/models → 401: the server rejected the key"
    assert SECRET not in "\n".join(lines)


async def test_silent_server_is_bounded_by_the_timeout(autojump_clock: trio.abc.Clock) -> None:
    """A server that accepts the connection and never answers: the check gives up at the bound."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        start = trio.current_time()
        check = await probe_base_url(url, None, 3.0)
        assert check.status == "fail"
        assert trio.current_time() - start == pytest.approx(3.0, abs=0.01)
        assert check.detail.startswith(f"cannot reach {url}/models:")
    finally:
        listener.close()


# ------------------------------------------------------------------------------------------------- ripgrep


def test_ripgrep_comes_with_reasonix(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ripgrep wheel is a dependency: doctor finds its rg next to this Python even with nothing on PATH."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, lines = doctor(capsys, "--offline", "--workspace", str(home))
    assert code == 0
    assert line(lines, "ripgrep") == f"✓ ripgrep: found at {Path(sysconfig.get_path('scripts')) / 'rg'}"


def test_configuring_the_command_imports_nothing_heavy() -> None:
    code = (
        "import argparse, sys\n"
        "from orchestrator.cli.commands import doctor\n"
        "doctor.configure(argparse.ArgumentParser())\n"
        "heavy = [m for m in ('trio', 'httpx', 'pydantic', 'rich', 'tokenizers') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.strip() == "[]"
