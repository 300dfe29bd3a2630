"""A scenario's workspace as it is on disk (issue 18): binary files, modes, symlinks in and out, a git history, and a
folder scenario's links and executable bits kept."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from scenarios.format import ScenarioError, load_scenario

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

SCRIPT = {"sessions": [{"key": "executor", "replies": [{"content": "ok"}]}]}
BLOB = bytes(range(256))


def _scenario(tmp_path: Path, **extra: object) -> Path:
    data = {"name": "ws", "title": "t", "origin": "scripted", "command": "run", "objective": "o", "script": SCRIPT}
    path = tmp_path / "ws.json"
    path.write_text(json.dumps({**data, **extra}), encoding="utf-8")
    return path


def test_entries_and_history_are_written_as_on_disk(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        workspace={"a.txt": "inline\n"},
        files=[
            {"path": "bin/blob", "base64": base64.b64encode(BLOB).decode()},
            {"path": "run.sh", "text": "#!/bin/sh\necho hi\n", "mode": "750"},
            {"path": "link", "symlink": "a.txt"},
            {"path": "out", "symlink": "/etc"},
        ],
        git={"commits": [{"message": "one", "files": {"a.txt": "old\n"}}, {"message": "two", "files": {"b": "b\n"}}]},
    )
    ws = tmp_path / "ws"
    load_scenario(path).write_workspace(ws)
    assert (ws / "bin/blob").read_bytes() == BLOB
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o750
    assert os.readlink(ws / "link") == "a.txt" and (ws / "link").read_text() == "inline\n"
    assert os.readlink(ws / "out") == "/etc"
    log = subprocess.run(["git", "log", "--format=%s %H"], cwd=ws, capture_output=True, text=True, check=True).stdout
    assert [line.split()[0] for line in log.splitlines()] == ["two", "one"]
    status = subprocess.run(["git", "status", "--short", "a.txt"], cwd=ws, capture_output=True, text=True).stdout
    assert status.strip() == "M a.txt"  # the inline text lies over the last commit: an uncommitted change
    again = tmp_path / "again"
    load_scenario(path).write_workspace(again)
    log2 = subprocess.run(["git", "log", "--format=%s %H"], cwd=again, capture_output=True, text=True).stdout
    assert log2 == log  # fixed author and dates: the same commit ids on every replay


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"path": "../x", "text": "t"}, "must be relative and stay inside"),
        ({"path": "/abs", "text": "t"}, "must be relative and stay inside"),
        ({"path": "x", "text": "t", "symlink": "y"}, "exactly one of text, base64, symlink"),
        ({"path": "x", "base64": "!!"}, "base64 does not decode"),
        ({"path": "x", "symlink": "y", "mode": "755"}, "a symlink has no mode"),
    ],
)
def test_bad_entries_are_refused_naming_the_entry(tmp_path: Path, entry: dict[str, str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_scenario(_scenario(tmp_path, files=[entry]))


def test_a_folder_scenario_keeps_its_links_modes_and_binary_files(tmp_path: Path) -> None:
    folder = tmp_path / "sc"
    (folder / "workspace").mkdir(parents=True)
    (folder / "scenario.json").write_text(_scenario(tmp_path).read_text(), encoding="utf-8")
    src = folder / "workspace"
    (src / "tool.sh").write_text("#!/bin/sh\n")
    (src / "tool.sh").chmod(0o755)
    (src / "blob").write_bytes(BLOB)
    (src / "link").symlink_to("tool.sh")
    ws = tmp_path / "out"
    load_scenario(folder).write_workspace(ws)
    assert (ws / "tool.sh").stat().st_mode & 0o777 == 0o755
    assert (ws / "blob").read_bytes() == BLOB
    assert (ws / "link").is_symlink() and os.readlink(ws / "link") == "tool.sh"
