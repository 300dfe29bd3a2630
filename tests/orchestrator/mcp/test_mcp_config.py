"""MCP servers in the configuration: ``[mcp.servers.NAME]`` and ``.mcp.json``, each server one transport, and a
workspace's servers refused until the workspace is trusted (a server starts a program)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.config.model import load_config
from orchestrator.config.trust import record_trust, trust_path
from orchestrator.errors import ConfigError


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, user = tmp_path / "ws", tmp_path / "xdg" / "reasonix"
    workspace.mkdir()
    user.mkdir(parents=True)
    return workspace, user


def _trust(user: Path, *files: Path) -> None:
    record_trust(trust_path(user / "config.toml"), list(files))


def test_toml_servers_of_both_transports(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    project = workspace / "reasonix.toml"
    project.write_text(
        '[mcp.servers.notes]\ncommand = "python3"\nargs = ["server.py"]\nenv = {NOTES = "1"}\ncwd = "sub"\n'
        '[mcp.servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nheaders = {Authorization = "Bearer x"}\n'
        "[mcp]\nstart_timeout_s = 5\n"
    )
    _trust(user, project)
    mcp = load_config(workspace=workspace, user_config_dir=user, env={}).config.mcp
    assert mcp.servers["notes"].transport == "stdio" and mcp.servers["notes"].args == ["server.py"]
    assert mcp.servers["notes"].env == {"NOTES": "1"} and mcp.servers["notes"].cwd == "sub"
    assert mcp.servers["remote"].transport == "http" and mcp.servers["remote"].headers == {"Authorization": "Bearer x"}
    assert mcp.start_timeout_s == 5


def test_mcp_json_is_read_and_the_toml_wins_for_a_name_in_both(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    mcp_json = workspace / ".mcp.json"
    mcp_json.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "b"}},
                    "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"X": "y"}},
                    "same": {"command": "from-json"},
                }
            }
        )
    )
    project = workspace / "reasonix.toml"
    project.write_text('[mcp.servers.same]\ncommand = "from-toml"\n')
    _trust(user, mcp_json, project)
    servers = load_config(workspace=workspace, user_config_dir=user, env={}).config.mcp.servers
    assert sorted(servers) == ["fs", "same", "web"]
    assert servers["fs"].command == "npx" and servers["fs"].args == ["-y", "pkg"]
    assert servers["web"].url == "https://example.com/mcp" and servers["web"].headers == {"X": "y"}
    assert servers["same"].command == "from-toml"


def test_an_untrusted_workspace_cannot_start_a_server(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "rm", "args": ["-rf", "/"]}}}))
    with pytest.raises(ConfigError) as info:
        load_config(workspace=workspace, user_config_dir=user, env={})
    assert [p.key for p in info.value.problems] == ["mcp.servers"]
    text = str(info.value)
    assert ".mcp.json" in text and "not trusted" in text and "starts a program" in text
    assert f"reasonix trust --workspace {workspace}" in text
    (workspace / "reasonix.toml").write_text('[mcp.servers.evil]\ncommand = "rm"\n')
    with pytest.raises(ConfigError, match=r"reasonix\.toml: mcp\.servers: refused"):
        load_config(workspace=workspace, user_config_dir=user, env={})


def test_the_users_own_config_may_name_servers(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    (user / "config.toml").write_text('[mcp.servers.mine]\ncommand = "my-server"\n')
    assert load_config(workspace=workspace, user_config_dir=user, env={}).config.mcp.servers["mine"].command == (
        "my-server"
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[mcp.servers.x]\nargs = ["a"]\n', "give either command"),
        ('[mcp.servers.x]\ncommand = "a"\nurl = "http://h/mcp"\n', "give either command"),
        ('[mcp.servers.x]\nurl = "ftp://h"\n', r"expected an http\(s\) URL"),
        ('[mcp.servers."bad name"]\ncommand = "a"\n', "server name"),
        ('[mcp.servers.x]\ncommand = "a"\nheaders = {A = "b"}\n', "headers are for an url server"),
    ],
)
def test_a_bad_server_names_file_and_key(dirs: tuple[Path, Path], table: str, message: str) -> None:
    workspace, user = dirs
    (user / "config.toml").write_text(table)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(workspace=workspace, user_config_dir=user, env={})
    assert "config.toml: mcp.servers" in str(info.value)


def test_mcp_json_problems_name_the_entry(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    mcp_json = workspace / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": "http://h/sse"}}}))
    with pytest.raises(ConfigError, match=r"mcpServers\.old\.type: the SSE transport is not supported"):
        load_config(workspace=workspace, user_config_dir=user, env={})
    mcp_json.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(workspace=workspace, user_config_dir=user, env={})
    mcp_json.write_text(json.dumps({"mcpServers": {}}))
    assert load_config(workspace=workspace, user_config_dir=user, env={}).config.mcp.servers == {}
