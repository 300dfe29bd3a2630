"""Preparing a workspace from each source kind: an sdist fetched with pip (from a local folder here: pip's own
``--find-links``), its sha256 checked and cached, unpacked safely, break.patch and setup applied in the sandbox; a git
source at its pinned commit with a fresh history; and unpacking that refuses members escaping the folder."""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from orchestrator.bench.sandboxed import bench_sandbox
from orchestrator.bench.task import load_task
from orchestrator.bench.workspace import TaskSourceError, prepare_workspace, unpack
from tests.support.bwrap import require_bwrap

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

BACKEND = """\
import os


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name = "tinypkg-1.0.dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n")
    return name
"""
TINY = {
    # An in-tree build backend: pip prepares the metadata with nothing installed and nothing downloaded.
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    "backend.py": BACKEND,
    "PKG-INFO": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg.py": "def double(x):\n    return 2 * x\n",
    "test_slow.py": "raise SystemExit('slow')\n",
}
BREAK = """diff --git a/tinypkg.py b/tinypkg.py
--- a/tinypkg.py
+++ b/tinypkg.py
@@ -1,2 +1,2 @@
 def double(x):
-    return 2 * x
+    return x + x + 1
"""


def tarball(path: Path, members: dict[str, str], top: str = "tinypkg-1.0") -> str:
    with tarfile.open(path, "w:gz") as t:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_task(folder: Path, source: str, *, setup: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(
        f'name = "{folder.name}"\nclass = "fix"\nobjective = "o"\nlicence = "MIT"\norigin = "test"\n'
        f"[source]\n{source}\n[setup]\ncommands = [{setup}]\n"
    )
    (folder / "verify.sh").write_text("true\n")
    (folder / "fix.patch").write_text("")
    return folder


def git(cwd: Path, *args: str) -> str:
    argv = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.bwrap
async def test_an_sdist_is_fetched_checked_cached_broken_set_up_and_seeded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    index = tmp_path / "index"
    index.mkdir()
    sha = tarball(index / "tinypkg-1.0.tar.gz", TINY)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    folder = write_task(
        tmp_path / "tasks" / "tiny",
        f'kind = "sdist"\nrequirement = "tinypkg==1.0"\nsha256 = "{sha}"',
        setup='"rm test_slow.py"',
    )
    (folder / "break.patch").write_text(BREAK)
    task = load_task(folder)
    cache, sandbox = tmp_path / "cache", bench_sandbox()
    await prepare_workspace(task, tmp_path / "ws", cache=cache, sandbox=sandbox, env={})
    ws = tmp_path / "ws"
    assert (ws / "tinypkg.py").read_text() == "def double(x):\n    return x + x + 1\n"
    assert not (ws / "test_slow.py").exists()
    assert git(ws, "log", "--format=%s").splitlines() == ["seed of tiny"]
    assert git(ws, "status", "--porcelain") == ""
    assert (cache / sha / "tinypkg-1.0.tar.gz").is_file()
    # From the cache: pip is not asked again (its index is gone).
    (index / "tinypkg-1.0.tar.gz").unlink()
    await prepare_workspace(task, tmp_path / "ws2", cache=cache, sandbox=sandbox, env={})
    assert (tmp_path / "ws2" / "tinypkg.py").is_file()
    # A checksum that does not match is refused, naming both.
    bad = write_task(tmp_path / "tasks" / "bad", f'kind = "sdist"\nrequirement = "tinypkg==1.0"\nsha256 = "{"0" * 64}"')
    sha2 = tarball(index / "tinypkg-1.0.tar.gz", TINY)
    with pytest.raises(TaskSourceError, match=f"has sha256 {sha2}, but task.toml says 0000"):
        await prepare_workspace(load_task(bad), tmp_path / "ws3", cache=cache, sandbox=sandbox, env={})


@pytest.mark.bwrap
async def test_a_git_source_is_checked_out_at_its_commit_with_a_fresh_history(tmp_path: Path) -> None:
    require_bwrap()
    upstream = tmp_path / "upstream"
    (upstream / "pkg").mkdir(parents=True)
    (upstream / "pkg" / "m.py").write_text("v = 1\n")
    git(upstream, "init", "-q")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "one")
    pinned = git(upstream, "rev-parse", "HEAD").strip()
    (upstream / "pkg" / "m.py").write_text("v = 2\n")
    git(upstream, "commit", "-qam", "two")
    folder = write_task(
        tmp_path / "tasks" / "g", f'kind = "git"\nurl = "{upstream}"\ncommit = "{pinned}"\nsubdir = "pkg"'
    )
    ws = tmp_path / "ws"
    await prepare_workspace(load_task(folder), ws, cache=tmp_path / "cache", sandbox=bench_sandbox(), env={})
    assert (ws / "m.py").read_text() == "v = 1\n"
    assert git(ws, "log", "--format=%s").splitlines() == ["seed of g"]


def test_unpacking_refuses_a_member_that_escapes(tmp_path: Path) -> None:
    archive = tmp_path / "evil-1.0.tar.gz"
    tarball(archive, {"../../escaped.txt": "boo"}, top="")
    with pytest.raises(TaskSourceError, match="cannot be unpacked safely"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()


def test_unpacking_refuses_an_absolute_link(tmp_path: Path) -> None:
    archive = tmp_path / "link-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        info = tarfile.TarInfo("link-1.0/passwd")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(info)
    with pytest.raises(TaskSourceError, match="cannot be unpacked safely"):
        unpack(archive, tmp_path / "out")
