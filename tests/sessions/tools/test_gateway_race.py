"""Issue 43 item 4 and the gate's part of 18: a directory swapped for a symlink to a directory outside, in a tight
loop (``renameat2(RENAME_EXCHANGE)``), while the file tools write and read through it 500 times. Not one byte lands
outside and no read returns a byte from outside; the gate's path resolution never raises. Run as root and, in CI, as
an unprivileged user (``.ci/sandbox-as-user``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessions.permissions.gate import workspace_paths
from sessions.tools import ToolContext, default_registry
from sessions.tools.search import find_rg
from tests.support.rename_exchange import swapping
from tests.support.tools import call

WRITES = 500
SECRET = "export SECRET=outside-43\n"
needs_rg = pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "dir").mkdir(parents=True)
    home.mkdir()
    (home / ".bashrc").write_text(SECRET)
    (ws / "link").symlink_to(home)  # absolute, to the directory outside
    return ws, home


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir()}


async def test_writes_and_reads_through_a_swapped_directory_never_reach_outside(tmp_path: Path) -> None:
    ws, home = _tree(tmp_path)
    before = _snapshot(home)
    registry, ctx = default_registry(use_ripgrep=False), ToolContext(root=ws)
    written = refused = 0
    with swapping(ws, "dir", "link") as swaps:
        for i in range(WRITES):
            result = await call(registry, ctx, "write_file", path="dir/.bashrc", content=f"inside {i}\n")
            written += not result.is_error
            refused += result.is_error and result.content.startswith("refused:")
            read = await call(registry, ctx, "read_file", path="dir/.bashrc", full=True)
            assert "outside-43" not in read.content
    assert _snapshot(home) == before, "a byte landed outside the workspace"
    assert swaps[0] > WRITES  # the swap really ran through the writes
    assert written > 0 and written + refused == WRITES
    # Every write that succeeded landed in the real directory, under one of its two names; no temporary file is left.
    landed = [p for p in ws.rglob("*") if p.is_file() and not p.is_symlink()]
    assert [p.name for p in landed] == [".bashrc"]
    assert landed[0].read_text().startswith("inside ")


def test_the_gates_path_resolution_never_raises_in_the_race(tmp_path: Path) -> None:
    ws, _ = _tree(tmp_path)
    candidates = workspace_paths(ws)
    seen: set[tuple[str, ...] | None] = set()
    with swapping(ws, "dir", "link"):
        for _ in range(20_000):
            seen.add(candidates("dir/sub/.bashrc"))  # on 05d9218: OSError EINVAL from realpath now and then
    assert seen <= {None, ("dir/sub/.bashrc",), ("dir/sub/.bashrc", "link/sub/.bashrc")}
    assert os.path.isdir(ws / "dir") and not os.path.islink(ws / "dir")


READS = 500
OUTSIDE = "outside-43"


def _read_tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = _tree(tmp_path)
    (home / f"{OUTSIDE}-name.txt").write_text(SECRET)
    (ws / "dir" / "notes.txt").write_text("export INSIDE=1\n")
    return ws, home


@pytest.mark.parametrize("use_ripgrep", [False, pytest.param(True, marks=needs_rg)], ids=["python", "ripgrep"])
async def test_list_glob_and_grep_through_a_swapped_directory_never_show_outside(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    """Part a of the issue's follow-up: the search tools list and read through held directory descriptors (ripgrep's
    answers are confirmed through them), so a directory swapped for a symlink to ``home`` mid-call never lets a name
    or a byte of ``home`` into a result."""
    ws, _ = _read_tree(tmp_path)
    registry, ctx = default_registry(use_ripgrep=use_ripgrep), ToolContext(root=ws)
    calls: list[tuple[str, dict[str, str]]] = [
        ("list_dir", {"path": "dir"}),
        ("glob", {"pattern": "**/*.txt"}),
        ("glob", {"pattern": "dir/*"}),
        ("grep", {"pattern": "export", "path": "dir"}),
        ("grep", {"pattern": "export"}),
    ]
    shown: set[str] = set()
    with swapping(ws, "dir", "link") as swaps:
        for _ in range(READS):
            for name, args in calls:
                result = await call(registry, ctx, name, **args)
                assert OUTSIDE not in result.content, (name, args, result.content)
                shown.update(result.content.splitlines())
    assert swaps[0] > READS
    assert "dir/notes.txt:1:export INSIDE=1" in shown  # the real directory was searched meanwhile
