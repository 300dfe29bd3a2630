"""MCP stdio servers run in the sandbox (real bubblewrap, real servers): a module the workspace planted is never
imported in place of the server's own, a server cannot write outside the workspace unless the user's config says so,
and only the user's config can loosen a server's sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from orchestrator.config.mcp import McpServerConfig
from orchestrator.config.model import load_config
from orchestrator.config.trust import record_trust, trust_path
from orchestrator.errors import ConfigError
from orchestrator.mcp.hub import McpHub
from orchestrator.mcp.tool import McpArgs
from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from sessions.tools.base import ToolContext
from tests.support.bwrap import require_bwrap
from tests.support.leftovers import assert_gone, pids_running
from tests.support.sockets import listen
from tests.support.vanish import RemovingAfterListing

from .support import NOTES_SERVER, mcp_config, notes_stdio

PLANTED = """
import pathlib, sys
pathlib.Path(sys.argv[0]).parent.joinpath("planted-ran").write_text("x")
pathlib.Path({marker!r}).write_text("the planted module ran on the host")
sys.exit(3)
"""


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="reasonix-mcp-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=pytest.mark.bwrap), False])
async def test_a_module_the_workspace_planted_is_never_imported(tmp_path: Path, outside: Path, sandboxed: bool) -> None:
    if sandboxed:
        require_bwrap()
    marker = outside / "ran"
    (tmp_path / "notes_server.py").write_text(PLANTED.format(marker=str(marker)))  # what a sandboxed bash wrote
    server = McpServerConfig(
        command=sys.executable,
        args=["-m", "notes_server"],
        env={"PYTHONPATH": str(NOTES_SERVER.parent)},
        sandbox=sandboxed,
    )
    hub = McpHub(mcp_config(notes=server), tmp_path)
    async with hub.open():
        [report] = hub.reports()
        assert hub.connections[0].confined is sandboxed
    assert report.state == "ready", report.error
    assert not marker.exists() and not (tmp_path / "planted-ran").exists()


@pytest.mark.bwrap
async def test_a_sandboxed_server_writes_the_workspace_but_not_outside_it(tmp_path: Path, outside: Path) -> None:
    require_bwrap()
    notes = McpServerConfig(command=sys.executable, args=[str(NOTES_SERVER)], cwd=".")
    free = notes.model_copy(update={"writable": [str(outside)]})
    hub = McpHub(mcp_config(notes=notes, free=free), tmp_path)
    ctx = ToolContext(root=tmp_path)
    async with hub.open():
        tools = {t.name: t for t in hub.tools()}
        inside = await tools["mcp__notes__write_note"].run(McpArgs(name="todo", text="in"), ctx)
        escape = await tools["mcp__notes__write_note"].run(McpArgs(name=str(outside / "x"), text="out"), ctx)
        allowed = await tools["mcp__free__write_note"].run(McpArgs(name=str(outside / "y"), text="out"), ctx)
    assert not inside.is_error and (tmp_path / "todo.txt").read_text() == "in"
    assert escape.is_error and not (outside / "x.txt").exists()  # the SDK hides the OSError
    assert not allowed.is_error and (outside / "y.txt").read_text() == "out"


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, user = tmp_path / "ws", tmp_path / "xdg" / "reasonix"
    workspace.mkdir()
    user.mkdir(parents=True)
    return workspace, user


def test_only_the_users_config_loosens_a_servers_sandbox(tmp_path: Path) -> None:
    workspace, user = _dirs(tmp_path)
    mcp_json = workspace / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"ws": {"command": "python3", "sandbox": False}}}))
    with pytest.raises(ConfigError) as raised:
        load_config(workspace=workspace, env={}, user_config_dir=user)
    assert "mcpServers.ws.sandbox: a workspace file cannot loosen a server's sandbox" in str(raised.value)
    mcp_json.unlink()

    project = workspace / "reasonix.toml"
    project.write_text('[mcp.servers.ws]\ncommand = "python3"\nnetwork = true\n')
    record_trust(trust_path(user / "config.toml"), [project])  # trusted, and still refused
    with pytest.raises(ConfigError) as raised:
        load_config(workspace=workspace, env={}, user_config_dir=user)
    assert "mcp.servers.ws.network: only your user config" in str(raised.value)

    project.write_text('[mcp.servers.mine]\ncommand = "node"\n')  # the user's server name, another command
    record_trust(trust_path(user / "config.toml"), [project])
    (user / "config.toml").write_text('[mcp.servers.mine]\ncommand = "python3"\nsandbox = false\n')
    with pytest.raises(ConfigError) as raised:
        load_config(workspace=workspace, env={}, user_config_dir=user)
    assert "mcp.servers.mine.command: sandbox for this server is in your user config" in str(raised.value)

    project.unlink()
    resolved = load_config(workspace=workspace, env={}, user_config_dir=user)
    assert resolved.config.mcp.servers["mine"].sandbox is False


LINGERING = [sys.executable, str(NOTES_SERVER), "--linger"]
"""A server that outlives its stdin's EOF: only a kill ends it."""

REASONIX = """
import sys
from pathlib import Path

import trio

from orchestrator.config.mcp import McpServerConfig
from orchestrator.mcp.hub import McpHub
from tests.orchestrator.mcp.support import mcp_config


async def main() -> None:
    server = McpServerConfig(command=sys.argv[2], args=sys.argv[3:], cwd=".")
    async with McpHub(mcp_config(notes=server), Path(sys.argv[1])).open() as hub:
        print(hub.reports()[0].state, flush=True)
        await trio.sleep_forever()


trio.run(main)
"""


@pytest.mark.bwrap
async def test_a_server_that_outlives_its_stdin_is_gone_when_the_session_ends(tmp_path: Path) -> None:
    require_bwrap()
    token = f"--test-{uuid.uuid4().hex}"  # a word of the server's command lines, this test's only
    hub = McpHub(mcp_config(notes=McpServerConfig(command=LINGERING[0], args=[*LINGERING[1:], token])), tmp_path)
    async with hub.open():
        assert hub.reports()[0].state == "ready" and hub.connections[0].confined
        assert pids_running(token)
    assert_gone(token, "the server is still running after its session ended")


@pytest.mark.bwrap
async def test_a_server_dies_with_a_reasonix_killed_by_sigkill(tmp_path: Path) -> None:
    require_bwrap()
    token = f"--test-{uuid.uuid4().hex}"
    argv = [sys.executable, "-c", REASONIX, str(tmp_path), *LINGERING, token]
    with trio.fail_after(120):
        proc = await trio.lowlevel.open_process(argv, stdout=subprocess.PIPE, cwd=str(Path(__file__).parents[3]))
        try:
            assert proc.stdout is not None
            assert (await proc.stdout.receive_some(100)).strip() == b"ready"
            assert pids_running(token)
        finally:
            proc.kill()
            await proc.wait()
    assert_gone(token, "the server outlived the Reasonix that started it")


@pytest.mark.bwrap
async def test_a_server_started_while_a_masked_socket_goes_away_starts_once_more(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program's socket folder removed after the server's launch listed it, before bubblewrap's mounts:
    bubblewrap stops before the server runs, with its setup error as the only output; the server is started once
    more, built again, and its tools are there."""
    bwrap = require_bwrap()
    (outside / "gone").mkdir()
    listener = listen(outside / "gone" / "agent.sock")
    made: list[BubblewrapSandbox | RemovingAfterListing] = []

    def removing(policy: SandboxPolicy) -> BubblewrapSandbox | RemovingAfterListing:
        box = BubblewrapSandbox(bwrap, policy)
        made.append(RemovingAfterListing(box, outside / "gone") if not made else box)  # only the first launch's
        return made[-1]

    monkeypatch.setattr("orchestrator.mcp.connection.sandbox_for", removing)
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    try:
        async with hub.open():
            [report] = hub.reports()
            names = sorted(t.name for t in hub.tools())
    finally:
        listener.close()
    assert report.state == "ready", report.error
    assert names == ["mcp__notes__read_note", "mcp__notes__write_note"]
    first = made[0]
    assert isinstance(first, RemovingAfterListing) and len(made) == 2
    assert str(outside / "gone" / "agent.sock") in first.launches[0].argv  # listed, then gone before bwrap ran
