"""A turn that wrote through the file tools stores those files itself (``checkpoints/objects.py``), after an
``lstat``. What a command of the model's made of the file meanwhile is never followed or waited on: a link out of the
workspace swapped in, or a FIFO, is not stored (the store would have kept a secret, and undo put it back)."""

from __future__ import annotations

import os
from pathlib import Path

import trio

from orchestrator.checkpoints.objects import store_file


def _ws(tmp_path: Path) -> tuple[Path, Path, os.stat_result]:
    ws, git_dir = tmp_path / "ws", tmp_path / "store.git"
    ws.mkdir()
    (git_dir / "objects").mkdir(parents=True)
    (ws / "a.py").write_text("x = 1\n")
    return ws, git_dir, (ws / "a.py").lstat()


def test_a_regular_file_is_stored_as_a_blob(tmp_path: Path) -> None:
    ws, git_dir, st = _ws(tmp_path)
    stored = store_file(git_dir, ws, "a.py", st, 1024)
    assert stored is not None and stored.mode == b"100644"
    assert (git_dir / "objects" / stored.sha[:2] / stored.sha[2:]).is_file()


def test_a_link_out_swapped_in_after_the_lstat_is_not_followed(tmp_path: Path) -> None:
    ws, git_dir, st = _ws(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("the user's key\n")
    (ws / "a.py").unlink()
    (ws / "a.py").symlink_to(secret)
    assert store_file(git_dir, ws, "a.py", st, 1024) is None
    assert not any((git_dir / "objects").iterdir())  # nothing of the secret reached the store


async def test_a_fifo_swapped_in_is_not_waited_on(tmp_path: Path) -> None:
    ws, git_dir, st = _ws(tmp_path)
    (ws / "a.py").unlink()
    os.mkfifo(ws / "a.py")
    with trio.fail_after(30):  # a blocking open would never return: nobody writes to the FIFO
        stored = await trio.to_thread.run_sync(store_file, git_dir, ws, "a.py", st, 1024, abandon_on_cancel=True)
    assert stored is None


def test_a_file_past_the_limit_is_not_stored(tmp_path: Path) -> None:
    ws, git_dir, st = _ws(tmp_path)
    assert store_file(git_dir, ws, "a.py", st, 3) is None
