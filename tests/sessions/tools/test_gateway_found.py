"""Issue 43's found items the file tools answered for, through the real tool classes (and the real permission gate):
.git written by write_file/edit_file (1), ``~outputs``/``~word`` paths crashing (13), ``read_file outline=true`` on a
deeply nested or an 8 GB sparse file (18). Each fails on 05d9218."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sessions.permissions.gate import workspace_paths
from sessions.tools import ToolContext, ToolRegistry
from tests.support.tools import call

FSMONITOR = '[core]\n\tfsmonitor = "touch /tmp/pwned-by-fsmonitor"\n'
ROOT = Path(__file__).resolve().parents[3]


def _git(ws: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=ws, env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


async def test_git_config_hooks_and_nested_git_are_never_written(
    ws: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    _git(ws, "init", "--quiet")
    (ws / "sub").mkdir()
    _git(ws / "sub", "init", "--quiet")
    (ws / "plain").mkdir()
    (ws / "gitlink").symlink_to(".git")  # a way in through a symlink the model made
    config, sub_config = (ws / ".git" / "config").read_bytes(), (ws / "sub" / ".git" / "config").read_bytes()
    attempts = [
        ("write_file", {"path": ".git/config", "content": FSMONITOR}),
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"}),
        ("write_file", {"path": "sub/.git/config", "content": FSMONITOR}),
        ("write_file", {"path": "plain/.git/config", "content": FSMONITOR}),  # a repository planted where none was
        ("write_file", {"path": "plain/.git", "content": "gitdir: ../.git\n"}),  # a gitlink file
        ("write_file", {"path": "gitlink/config", "content": FSMONITOR}),
        ("write_file", {"path": "./sub/../.git/hooks/post-checkout", "content": "#!/bin/sh\n"}),
        ("edit_file", {"path": ".git/config", "edits": [{"old": "[core]", "new": FSMONITOR}]}),
        ("edit_file", {"path": "sub/.git/config", "edits": [{"old": "[core]", "new": FSMONITOR}]}),
        ("read_file", {"path": ".git/config"}),
    ]
    for name, args in attempts:
        result = await call(registry, ctx, name, **args)
        assert result.is_error, (name, args, result.content)
        assert result.content.startswith("refused:") and ".git" in result.content, result.content
    assert (ws / ".git" / "config").read_bytes() == config
    assert (ws / "sub" / ".git" / "config").read_bytes() == sub_config
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".git" / "hooks" / "post-checkout").exists()
    assert sorted(os.listdir(ws / "plain")) == []
    assert "fsmonitor" not in _git(ws, "config", "--list", "--local")
    # An ordinary file beside them is written as before.
    ok = await call(registry, ctx, "write_file", path="sub/notes.gitconfig", content="x\n")
    assert not ok.is_error and (ws / "sub" / "notes.gitconfig").read_text() == "x\n"


async def test_kept_outputs_are_read_and_tilde_words_get_a_clear_error(
    ws: Path, tmp_path: Path, registry: ToolRegistry
) -> None:
    outputs = tmp_path / "run" / "executor.outputs"
    outputs.mkdir(parents=True)
    (outputs / "0000-call_00_x.txt").write_text("line one\nline two\n")
    ctx = ToolContext(root=ws, outputs=outputs)
    # The gate resolves every path before a tool runs: "~outputs" was taken for a user name (RuntimeError there).
    assert workspace_paths(ws)("~outputs/0000-call_00_x.txt") is None
    assert workspace_paths(ws)("~nosuchuser/x") is None
    kept = await call(registry, ctx, "read_file", path="~outputs/0000-call_00_x.txt")
    assert not kept.is_error and kept.content == "1\tline one\n2\tline two"
    missing = await call(registry, ctx, "read_file", path="~outputs/0001-call_00_y.txt")
    assert missing.is_error and "no kept output '~outputs/0001-call_00_y.txt'" in missing.content
    for raw in ("~nosuchuser/x", "~outputs", "~root/.bashrc", "~/.bashrc", "~"):
        tools: list[tuple[str, dict[str, str]]] = [
            ("read_file", {}), ("write_file", {"content": "x"}), ("list_dir", {}), ("grep", {"pattern": "x"})
        ]  # fmt: skip
        for name, args in tools:
            result = await call(registry, ctx, name, path=raw, **args)
            assert result.is_error, (name, raw)
            assert "is not expanded here" in result.content and "relative to the workspace root" in result.content
    assert sorted(os.listdir(ws)) == []


async def test_outline_of_a_deeply_nested_file_is_an_answer(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "chain.py").write_text("x = " + " + ".join(["a"] * 200_000) + "\n")  # RecursionError in ast construction
    (ws / "unary.py").write_text("x = " + "-" * 100_000 + "1\n")  # the parser's stack: MemoryError
    for name in ("chain.py", "unary.py"):
        result = await call(registry, ctx, "read_file", path=name, outline=True)
        assert not result.is_error
        assert result.content == f"No outline: {name} nests too deeply to parse. Read it with start_line/end_line."
    # A normal file still gets its outline.
    (ws / "ok.py").write_text("class A:\n    def f(self):\n        pass\n")
    ok = await call(registry, ctx, "read_file", path="ok.py", outline=True)
    assert ok.content.splitlines()[1:] == ["1-3\tclass A", "2-3\t  def f"]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


def test_outline_of_an_8_gb_sparse_file_reads_a_bounded_part(ws: Path) -> None:
    big = ws / "big.py"
    with big.open("wb") as fh:
        fh.write(b"def f():\n    pass\n")
        fh.truncate(8 * 1024**3)  # sparse: no disk used
    program = textwrap.dedent(f"""
        import trio
        from pathlib import Path
        from sessions.tools import ToolContext
        from sessions.tools.files.read_file import ReadFileArgs, ReadFileTool
        args, ctx = ReadFileArgs(path="big.py", outline=True), ToolContext(root=Path({str(ws)!r}))
        result = trio.run(ReadFileTool().run, args, ctx)
        print(result.content)
    """)  # fmt: skip
    # In a child under a 2 GiB address-space limit: reading the file whole fails there at once, not on this machine.
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"No outline: big.py has {8 * 1024**3} bytes, more than the 4194304 an outline reads")


@pytest.mark.parametrize("kind", ["fifo", "socket"])
async def test_special_files_are_refused_by_every_file_tool(
    ws: Path, ctx: ToolContext, registry: ToolRegistry, kind: str
) -> None:
    if kind == "fifo":
        os.mkfifo(ws / "special")
    else:
        import socket

        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(ws / "special"))
        sock.close()
    for name, args in (
        ("read_file", {}),
        ("read_file", {"outline": True}),
        ("edit_file", {"edits": [{"old": "a", "new": "b"}]}),
        ("grep", {"pattern": "x"}),
    ):
        result = await call(registry, ctx, name, path="special", **args)
        assert result.is_error and "not a regular file" in result.content, (name, result.content)
