"""BranchWorkspace on real git repositories and plain directories: the copy holds uncommitted and untracked files
and shares ignored directories; merging back is a three-way merge, all or nothing; the user's .git never changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from orchestrator.branches import BranchError, BranchWorkspace, MergeOutcome
from orchestrator.checkpoints.caches import is_tool_cache
from tests.support.git_repo import make_repo, tree_state, user_git, user_repo_bytes

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def run(fn, *args):  # type: ignore[no-untyped-def]
    return trio.run(fn, *args)


def _edit_line(path: Path, n: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[n - 1] = text + "\n"
    path.write_text("".join(lines))


@pytest.fixture(params=["git", "plain"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    files = {"a.txt": LINES, "src/b.py": "print('b')\n", "keep.txt": "keep\n", ".gitignore": ".venv/\nbuild/\n"}
    root = tmp_path / "ws"
    if request.param == "git":
        return make_repo(root, files)
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def run_dir(ws: Path) -> Path:
    return ws / ".reasonix" / "runs" / "r1"


def test_the_copy_holds_uncommitted_and_untracked_files_but_not_reasonix(ws: Path) -> None:
    (ws / "a.txt").write_text("edited, not committed\n")
    (ws / "new.txt").write_text("untracked\n")
    (ws / ".reasonix" / "x").mkdir(parents=True)

    async def main() -> None:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        assert (b.path / "a.txt").read_text() == "edited, not committed\n"
        assert (b.path / "new.txt").read_text() == "untracked\n"
        assert not (b.path / ".reasonix").exists()
        assert b.path == (run_dir(ws) / "branches" / "s1").resolve()
        await b.discard()
        assert not b.path.exists()

    run(main)


def test_disjoint_changes_on_both_sides_are_both_merged(ws: Path) -> None:
    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        _edit_line(b.path / "a.txt", 2, "branch two")
        (b.path / "src" / "c.py").write_text("new in branch\n")
        _edit_line(ws / "a.txt", 18, "live eighteen")  # the workspace moved on meanwhile
        (ws / "keep.txt").write_text("live edit\n")
        return await b.merge_back(["a.txt", "src/"])

    out = run(main)
    assert out.merged, out.reason
    assert out.changed == ("a.txt", "src/c.py")
    text = (ws / "a.txt").read_text()
    assert "branch two\n" in text and "live eighteen\n" in text and "line 10\n" in text
    assert (ws / "src" / "c.py").read_text() == "new in branch\n"
    assert (ws / "keep.txt").read_text() == "live edit\n"


def test_a_same_line_conflict_applies_nothing_and_names_the_file(ws: Path) -> None:
    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        _edit_line(b.path / "a.txt", 5, "branch five")
        (b.path / "src" / "b.py").write_text("print('branch')\n")  # mergeable on its own
        _edit_line(ws / "a.txt", 5, "live five")
        before.update(tree_state(ws))
        return await b.merge_back(["a.txt", "src/b.py"])

    before: dict[str, tuple[str, bytes]] = {}
    out = run(main)
    assert not out.merged
    assert out.conflicts == ("a.txt",)
    assert out.why == ("both changed the same lines",)
    # The outcome's words name no step (a subagent's copy is merged the same way); each caller says whose it was.
    assert out.reason == (
        "nothing in the workspace was changed: changed both in its copy and in the workspace since it began: "
        "a.txt (both changed the same lines)."
    )
    assert tree_state(ws) == before


def test_a_write_outside_the_declared_files_applies_nothing(ws: Path) -> None:
    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        (b.path / "src" / "b.py").write_text("declared\n")
        (b.path / "keep.txt").write_text("not declared\n")
        return await b.merge_back(["src/*.py"])

    before = tree_state(ws)
    out = run(main)
    assert not out.merged
    assert out.undeclared == ("keep.txt",)
    assert out.conflicts == ()
    assert out.declared == ("src/*.py",)
    said = "nothing in the workspace was changed: it wrote outside its declared files (src/*.py): keep.txt."
    assert out.reason == said
    assert tree_state(ws) == before


def test_deletions_new_files_modes_and_symlinks_are_merged(ws: Path) -> None:
    os.symlink("a.txt", ws / "link")

    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        assert os.readlink(b.path / "link") == "a.txt"
        (b.path / "keep.txt").unlink()
        (b.path / "deep" / "er").mkdir(parents=True)
        (b.path / "deep" / "er" / "new.sh").write_text("#!/bin/sh\n")
        os.chmod(b.path / "deep" / "er" / "new.sh", 0o755)
        os.chmod(b.path / "src" / "b.py", 0o755)
        (b.path / "link").unlink()
        os.symlink("src/b.py", b.path / "link")
        os.symlink("deep", b.path / "newlink")
        return await b.merge_back(["keep.txt", "deep/", "src/b.py", "link", "newlink"])

    out = run(main)
    assert out.merged, out.reason
    assert not (ws / "keep.txt").exists()
    assert (ws / "deep" / "er" / "new.sh").read_text() == "#!/bin/sh\n"
    assert os.access(ws / "deep" / "er" / "new.sh", os.X_OK)
    assert os.access(ws / "src" / "b.py", os.X_OK)
    assert os.readlink(ws / "link") == "src/b.py"
    assert os.readlink(ws / "newlink") == "deep"


def test_a_binary_file_changed_on_both_sides_is_a_conflict(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\0\1\2" * 100)

    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        (b.path / "blob.bin").write_bytes(b"\0branch")
        (ws / "blob.bin").write_bytes(b"\0live")
        return await b.merge_back(["blob.bin"])

    out = run(main)
    assert not out.merged and out.conflicts == ("blob.bin",)
    assert "binary" in out.reason
    assert (ws / "blob.bin").read_bytes() == b"\0live"


def test_a_deletion_against_an_edit_is_a_conflict(ws: Path) -> None:
    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        (b.path / "keep.txt").unlink()
        (ws / "keep.txt").write_text("live edit\n")
        return await b.merge_back(["keep.txt"])

    out = run(main)
    assert not out.merged and out.conflicts == ("keep.txt",)
    assert (ws / "keep.txt").read_text() == "live edit\n"


def test_an_ignored_venv_is_usable_in_the_branch_and_never_merged_back(ws: Path) -> None:
    bin_dir = ws / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "tool").write_text("#!/bin/sh\necho from-venv\n")
    os.chmod(bin_dir / "tool", 0o755)
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\0obj")

    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        done = await trio.run_process([".venv/bin/tool"], cwd=b.path, capture_stdout=True)
        assert done.stdout == b"from-venv\n"
        assert (b.path / "build" / "out.o").read_bytes() == b"\0obj"
        (b.path / "src" / "b.py").write_text("changed\n")
        (b.path / "build2").mkdir()
        out = await b.merge_back(["src/b.py"])  # .venv and build are not "undeclared writes"
        await b.discard()
        return out

    out = run(main)
    assert out.merged and out.changed == ("src/b.py",), out.reason
    assert (bin_dir / "tool").exists() and (ws / "build" / "out.o").exists()  # discard did not follow the links
    assert not (ws / ".venv").is_symlink()


def test_the_users_git_is_untouched(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": LINES, "b.txt": "b\n"})
    (ws / "a.txt").write_text(LINES + "uncommitted\n")
    (ws / "untracked.txt").write_text("u\n")
    user_git(ws, "add", "b.txt")  # something staged, so the index is not just HEAD
    (ws / "b.txt").write_text("b staged then edited\n")
    before = user_repo_bytes(ws)

    async def main() -> None:
        b1 = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        b2 = await BranchWorkspace.open(ws, run_dir(ws), "s2")
        # a git command run inside the branch (a verify command, say) sees the branch, not the user's repository
        user_git(b1.path, "status")
        (b1.path / "c.txt").write_text("c\n")
        (b2.path / "d.txt").write_text("d\n")
        assert (await b1.merge_back(["c.txt"])).merged
        assert (await b2.merge_back(["d.txt"])).merged
        await b1.discard()
        await b2.discard()

    run(main)
    after = user_repo_bytes(ws)
    assert after.pop("status") != before.pop("status")  # c.txt and d.txt, merged back, are untracked files now
    assert after == before
    status = user_git(ws, "status", "--porcelain")
    assert "c.txt" in status and "d.txt" in status and "branches" not in status


def test_reopening_a_step_throws_the_old_copy_away(ws: Path) -> None:
    async def main() -> None:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        (b.path / "half-done.txt").write_text("from a killed run\n")
        again = await BranchWorkspace.open(ws, run_dir(ws), "s1")  # resume after SIGKILL: no discard was called
        assert not (again.path / "half-done.txt").exists()
        assert (again.path / "a.txt").read_text() == LINES
        out = await again.merge_back([])
        assert out.merged and out.changed == ()
        await again.discard()

    run(main)


def test_a_nested_ignored_directory_is_shared_and_never_merged_back(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"web/app.js": "app\n", ".gitignore": "node_modules/\nvendor/\n"})
    (ws / "web" / "node_modules" / "lib").mkdir(parents=True)
    (ws / "web" / "node_modules" / "lib" / "index.js").write_text("lib\n")
    (ws / "vendor" / "x" / ".git").mkdir(parents=True)
    (ws / "vendor" / "x" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")

    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        assert (b.path / "web" / "node_modules").is_symlink()
        assert (b.path / "web" / "node_modules" / "lib" / "index.js").read_text() == "lib\n"
        assert (b.path / "vendor").is_symlink()  # ignored as a whole: shared, its embedded repository included
        (b.path / "web" / "app.js").write_text("app 2\n")
        out = await b.merge_back(["web/app.js"])
        await b.discard()
        return out

    out = run(main)
    assert out.merged and out.changed == ("web/app.js",), out.reason
    assert (ws / "web" / "node_modules" / "lib" / "index.js").read_text() == "lib\n"
    assert (ws / "vendor" / "x" / ".git" / "HEAD").is_file()


def test_a_copy_that_cannot_be_made_is_a_branch_error_that_says_where(ws: Path) -> None:
    blocker = ws / ".reasonix" / "runs"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("a file where the run directories should be\n")

    async def main() -> None:
        await BranchWorkspace.open(ws, blocker / "r1", "s1")

    with pytest.raises(BranchError, match="cannot make a copy of the workspace for step s1"):
        run(main)


def test_caches_written_by_running_the_code_are_neither_merged_nor_undeclared(ws: Path) -> None:
    """Bytecode writing on (most users' default): a verify command that imports the step's module writes
    ``src/__pycache__``; that, test runners' caches and ``node_modules/.cache`` are not the step's writes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    async def main() -> MergeOutcome:
        b = await BranchWorkspace.open(ws, run_dir(ws), "s1")
        (b.path / "src" / "b.py").write_text("VALUE = 2\n")
        await trio.run_process(["python3", "-c", "import b"], cwd=b.path / "src", env=env)
        assert any((b.path / "src" / "__pycache__").iterdir())
        for rel in (".pytest_cache/v/cache/lastfailed", "web/node_modules/.cache/babel/x.json", "old.pyc"):
            (b.path / rel).parent.mkdir(parents=True, exist_ok=True)
            (b.path / rel).write_text("{}")
        out = await b.merge_back(["src/b.py"])
        await b.discard()
        return out

    out = run(main)
    assert out.merged and out.changed == ("src/b.py",), out.reason
    assert (ws / "src" / "b.py").read_text() == "VALUE = 2\n"
    assert not (ws / "src" / "__pycache__").exists() and not (ws / ".pytest_cache").exists()
    assert not (ws / "web").exists() and not (ws / "old.pyc").exists()


@pytest.mark.parametrize(
    ("rel", "cache"),
    [
        ("src/__pycache__/b.cpython-311.pyc", True),
        ("b.pyc", True),
        (".mypy_cache/3.11/x.json", True),
        ("a/.ruff_cache/CACHEDIR.TAG", True),
        ("node_modules/.cache/x", True),
        ("web/node_modules/.cache/babel/y", True),
        ("src/pycache.py", False),
        ("node_modules/left-pad/index.js", False),
        ("docs/.cache", False),
        ("__pycache__", False),
    ],
)
def test_what_counts_as_a_tool_cache(rel: str, cache: bool) -> None:
    assert is_tool_cache(rel) is cache
