"""The workspace's ``.git/info/exclude`` is copied into the checkpoint store (which sandboxed commands can read) only
when it is a regular file reached without a symlink: real files, real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.checkpoints.git import ShadowRepo


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.mark.parametrize("linked", ["exclude", "info", ".git"])
async def test_an_exclude_file_reached_through_a_symlink_is_not_copied_into_the_store(
    tmp_path: Path, linked: str
) -> None:
    secret = tmp_path / "secret"
    (secret / "info").mkdir(parents=True)
    (secret / "info" / "exclude").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    if linked == ".git":
        os.symlink(secret, ws / ".git")
    else:
        (ws / ".git").mkdir()
        if linked == "info":
            os.symlink(secret / "info", ws / ".git" / "info")
        else:
            (ws / ".git" / "info").mkdir()
            os.symlink(secret / "info" / "exclude", ws / ".git" / "info" / "exclude")
    repo = ShadowRepo(ws)
    await repo.ensure()
    assert "PRIVATE KEY" not in (repo.git_dir / "info" / "exclude").read_text()


async def test_a_plain_exclude_file_is_still_honoured(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "info").mkdir(parents=True)
    (ws / ".git" / "info" / "exclude").write_text("private.txt\n")
    repo = ShadowRepo(ws)
    await repo.ensure()
    assert "private.txt" in (repo.git_dir / "info" / "exclude").read_text()
