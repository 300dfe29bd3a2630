"""Workspace confinement: ``..``, absolute paths outside and symlinks out are refused, through the real tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessions.tools import ToolContext, ToolRegistry, WorkspaceEscapeError
from sessions.tools.paths import resolve
from tests.support.tools import call


def test_relative_paths_resolve_inside(ws: Path) -> None:
    (ws / "src").mkdir()
    target = resolve(ws, "src/../src/a.py")
    assert target.path == ws.resolve() / "src" / "a.py"
    assert target.rel == "src/a.py"
    assert resolve(ws, ".").rel == "."
    assert resolve(ws, str(ws / "src")).rel == "src"  # absolute inside the workspace is fine


@pytest.mark.parametrize("raw", ["..", "../outside.txt", "src/../../outside.txt", "a/b/../../../x"])
def test_dotdot_out_is_refused(ws: Path, raw: str) -> None:
    with pytest.raises(WorkspaceEscapeError, match="leads outside the workspace"):
        resolve(ws, raw)


def test_absolute_outside_is_refused(ws: Path) -> None:
    with pytest.raises(WorkspaceEscapeError, match="absolute path '/etc/passwd' is outside"):
        resolve(ws, "/etc/passwd")


def test_symlink_out_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    (ws / "link").symlink_to(outside)
    (ws / "filelink").symlink_to(outside / "secret.txt")
    for raw in ("link/secret.txt", "filelink", "link"):
        with pytest.raises(WorkspaceEscapeError, match="symlink that leads outside"):
            resolve(ws, raw)


def test_symlink_inside_is_allowed(ws: Path) -> None:
    (ws / "real").mkdir()
    (ws / "alias").symlink_to(ws / "real")
    assert resolve(ws, "alias/x").path == ws.resolve() / "real" / "x"


async def test_tools_refuse_escapes_without_touching_outside(
    ws: Path, tmp_path: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    (ws / "link").symlink_to(outside)
    cases: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("read_file", {"path": str(outside / "secret.txt")}),
        ("read_file", {"path": "link/secret.txt"}),
        ("write_file", {"path": "link/new.txt", "content": "x"}),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("edit_file", {"path": "link/secret.txt", "edits": [{"old": "s3cret", "new": "gone"}]}),
        ("list_dir", {"path": "link"}),
        ("glob", {"pattern": "*", "path": ".."}),
        ("grep", {"pattern": "s3cret", "path": "link"}),
    ]
    for name, args in cases:
        result = await call(registry, ctx, name, **args)
        assert result.is_error, (name, args)
        assert result.content.startswith("refused:"), result.content
        assert "s3cret" not in result.content
        if str(tmp_path) not in str(args):  # the tool adds no absolute path of its own
            assert str(tmp_path) not in result.content
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "s3cret\n"


async def test_grep_walk_does_not_follow_symlinks_out(ws: Path, tmp_path: Path, ctx: ToolContext) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (ws / "dirlink").symlink_to(outside)
    (ws / "filelink.txt").symlink_to(outside / "secret.txt")
    (ws / "mine.txt").write_text("needle\n")
    from sessions.tools import default_registry

    for use_rg in (False, None):
        result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="needle")
        assert result.content == "mine.txt:1:needle", (use_rg, result.content)
