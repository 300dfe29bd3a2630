"""``$HOME``, ``/`` and system directories are refused as a workspace by every front end that runs a session, through
the real CLI (issue 43 item 17): ``-p``, ``run``, ``goal``, ``code`` (in a pseudo-terminal), ACP's ``session/new`` and
the service's goal start. A session there let the sandbox write ``~/.bashrc`` and ``~/.gitconfig``. Each refusal says
what the directory is and what to do, and nothing is written there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pexpect
import pytest

from tests.support.repl_pty import spawn_code

from .run_support import ROOT, clean_env, reasonix, start_reasonix

NOWHERE = "http://127.0.0.1:9"
TOKEN = "refusal-token-0123456789abcdef"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home one level below a folder of homes (as /home/me is below /home)."""
    path = tmp_path / "users" / "me"
    path.mkdir(parents=True)
    (path / ".bashrc").write_text("# the user's own\n")
    return path


def _untouched(home: Path) -> None:
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"]  # no .reasonix, no .gitconfig, nothing
    assert (home / ".bashrc").read_text() == "# the user's own\n"


@pytest.mark.parametrize(
    "command",
    [["-p", "say hi"], ["run", "say hi"], ["goal", "say hi", "--yes"]],
    ids=["print", "run", "goal"],
)
def test_the_home_directory_is_refused_with_what_to_do(home: Path, command: list[str]) -> None:
    done = reasonix(*command, "--workspace", str(home), "--base-url", NOWHERE, env=clean_env(home))
    assert done.returncode == 2, done.stderr
    assert f"the workspace {home} is your home directory: a session there could change every file in it" in done.stderr
    assert "cd into a project directory (or pass --workspace DIR) and start again" in done.stderr
    assert "Traceback" not in done.stderr
    _untouched(home)


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("/", "is the root directory (a system directory)"),
        ("/usr", "is a system directory"),
        ("/etc", "is a system directory"),
        ("/usr/share", "is a system directory"),
        ("/var", "is a system directory"),
        ("HOMES", "holds your home directory"),
    ],
)
def test_root_system_directories_and_the_folder_of_homes_are_refused(home: Path, where: str, said: str) -> None:
    path = home.parent if where == "HOMES" else Path(where)
    done = reasonix("-p", "say hi", "--workspace", str(path), "--base-url", NOWHERE, env=clean_env(home))
    assert done.returncode == 2 and f"the workspace {path} {said}" in done.stderr, done.stderr
    assert "cd into a project directory" in done.stderr


def test_a_project_below_the_home_is_taken(home: Path) -> None:
    project = home / "project"
    project.mkdir()
    done = reasonix("-p", "say hi", "--workspace", str(project), "--base-url", NOWHERE, env=clean_env(home))
    assert "the workspace" not in done.stderr, done.stderr  # it went on to the (unreachable) model instead


def test_code_refuses_the_home_directory_in_a_terminal(home: Path) -> None:
    child = spawn_code(home, NOWHERE, clean_env(home))
    child.expect(pexpect.EOF)
    child.close()
    said = " ".join((child.before or "").split())
    assert child.exitstatus == 2, said
    assert "is your home directory" in said and "cd into a project directory" in said
    _untouched(home)


def test_acp_refuses_a_session_in_the_home_directory(home: Path) -> None:
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}]
    for ident, cwd in ((2, home), (3, Path("/")), (4, home.parent)):
        lines.append(
            {"jsonrpc": "2.0", "id": ident, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}}
        )
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "acp", "--base-url", NOWHERE],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=clean_env(home),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert "result" in answers[1]
    errors = {ident: answers[ident]["error"]["message"] for ident in (2, 3, 4)}
    assert f"the workspace {home} is your home directory" in errors[2]
    assert "the workspace / is the root directory" in errors[3]
    assert f"the workspace {home.parent} holds your home directory" in errors[4]
    assert all(message.endswith("; open a project folder instead") for message in errors.values()), errors
    _untouched(home)


def test_the_service_refuses_a_goal_in_the_home_directory(home: Path, tmp_path: Path) -> None:
    env = clean_env(home)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    proc = start_reasonix("serve", "--port", "0", "--token", TOKEN, "--base-url", NOWHERE, env=env)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("reasonix serve: http://127.0.0.1:"), (line, proc.stderr.read())
        base = line.removeprefix("reasonix serve: ").partition("/?token=")[0]
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
            for path, said in ((home, "is your home directory"), (home.parent, "holds your home directory")):
                response = client.post("/api/goals", json={"workspace": str(path), "objective": "Say hello"})
                assert response.status_code == 400, response.text
                assert f"workspace {str(path)!r} {said}" in response.json()["error"]
                assert "not your home" in response.json()["hint"]
            assert client.get("/api/runs").json()["runs"] == []
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    _untouched(home)
