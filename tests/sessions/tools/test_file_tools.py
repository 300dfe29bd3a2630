"""read_file, write_file, list_dir and glob on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sessions.tools import ToolContext, ToolLimits, ToolRegistry
from tests.support.tools import call


async def test_read_file_numbers_lines(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n")
    result = await call(registry, ctx, "read_file", path="a.py")
    assert result.content == "1\tdef f():\n2\t    return 1"
    assert not result.is_error


async def test_read_file_range_and_crlf(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "w.txt").write_bytes(b"l1\r\nl2\r\nl3\r\nl4\r\n")
    result = await call(registry, ctx, "read_file", path="w.txt", start_line=2, end_line=3)
    assert result.content == "2\tl2\n3\tl3\n(lines 2-3 of 4)"
    past = await call(registry, ctx, "read_file", path="w.txt", start_line=9)
    assert past.is_error and past.content == "start_line=9 is past the end of 'w.txt', which has 4 lines"
    backwards = await call(registry, ctx, "read_file", path="w.txt", start_line=3, end_line=2)
    assert backwards.is_error and "end_line must not be smaller than start_line" in backwards.content


async def test_read_file_cap_says_how_to_read_more(ws: Path, registry: ToolRegistry) -> None:
    (ws / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 1201)))
    ctx = ToolContext(root=ws)
    result = await call(registry, ctx, "read_file", path="big.txt")
    lines = result.content.split("\n")
    assert lines[0] == "1\tline 1" and lines[399] == "400\tline 400"
    assert lines[-1] == "… truncated at line 400 of 1200; call read_file with start_line=401 to read more"
    follow = await call(registry, ctx, "read_file", path="big.txt", start_line=401)
    assert follow.content.split("\n")[0] == "401\tline 401"
    # The character cap cuts too, and says where.
    small = ToolContext(root=ws, limits=ToolLimits(read_max_chars=100))
    cut = await call(registry, small, "read_file", path="big.txt", start_line=10)
    assert cut.content.endswith("call read_file with start_line=19 to read more")
    assert len(cut.content) < 200


async def test_read_file_errors(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "d").mkdir()
    (ws / "bin").write_bytes(b"\x7fELF\x00\x01")
    (ws / "empty").write_text("")
    assert (await call(registry, ctx, "read_file", path="nope.txt")).content.startswith("not found: 'nope.txt'")
    assert "is a directory" in (await call(registry, ctx, "read_file", path="d")).content
    assert "binary" in (await call(registry, ctx, "read_file", path="bin")).content
    assert (await call(registry, ctx, "read_file", path="empty")).content == "(empty is empty)"


async def test_write_file_creates_parents_and_overwrites_atomically(
    ws: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    result = await call(registry, ctx, "write_file", path="pkg/sub/mod.py", content="x = 1\ny = 2\n")
    assert result.content == "created pkg/sub/mod.py (2 lines, 12 bytes)"
    assert (ws / "pkg/sub/mod.py").read_text() == "x = 1\ny = 2\n"
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    result = await call(registry, ctx, "write_file", path="run.sh", content="echo hi")
    assert result.content == "overwrote run.sh (1 lines, 7 bytes)"
    assert script.read_text() == "echo hi"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755  # mode kept across the atomic replace
    assert sorted(os.listdir(ws)) == ["pkg", "run.sh"]  # no temporary file left behind


async def test_write_file_refuses_a_directory(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "d").mkdir()
    result = await call(registry, ctx, "write_file", path="d", content="x")
    assert result.is_error and "is a directory" in result.content


async def test_list_dir_sorted_marks_dirs_and_hides_ignored(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / ".gitignore").write_text("node_modules/\n*.log\n")
    (ws / "node_modules").mkdir()
    (ws / "src").mkdir()
    (ws / ".git").mkdir()
    (ws / "b.txt").write_text("")
    (ws / "a.log").write_text("")
    (ws / "link").symlink_to(ws / "src")
    result = await call(registry, ctx, "list_dir")
    assert result.content == ".gitignore\nb.txt\nlink/@\nsrc/\n(2 entries ignored by .gitignore not shown)"
    assert (await call(registry, ctx, "list_dir", path="src")).content == "(src is empty)"
    assert "is a file" in (await call(registry, ctx, "list_dir", path="b.txt")).content


async def test_list_dir_caps_entries(ws: Path, registry: ToolRegistry) -> None:
    for n in range(30):
        (ws / f"f{n:02}").write_text("")
    ctx = ToolContext(root=ws, limits=ToolLimits(list_max_entries=10))
    lines = (await call(registry, ctx, "list_dir")).content.split("\n")
    assert lines[:2] == ["f00", "f01"] and len(lines) == 11
    assert lines[-1] == "… 20 more entries not shown; use glob to narrow down"


async def test_glob_matches_sorted_relative_and_honours_gitignore(
    ws: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    (ws / ".gitignore").write_text("build/\n")
    for rel in ("src/a.py", "src/pkg/b.py", "src/pkg/c.txt", "build/gen.py", "top.py", ".git/hooks/x.py"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("")
    assert (await call(registry, ctx, "glob", pattern="*.py")).content == "src/a.py\nsrc/pkg/b.py\ntop.py"
    assert (await call(registry, ctx, "glob", pattern="src/**/*.py")).content == "src/a.py\nsrc/pkg/b.py"
    assert (await call(registry, ctx, "glob", pattern="*.py", path="src/pkg")).content == "src/pkg/b.py"
    assert (await call(registry, ctx, "glob", pattern="*.rs")).content == "no files match '*.rs' under ."
    # Asking inside an ignored directory explicitly still finds its files.
    assert (await call(registry, ctx, "glob", pattern="*.py", path="build")).content == "build/gen.py"


async def test_glob_caps_results(ws: Path, registry: ToolRegistry) -> None:
    for n in range(15):
        (ws / f"m{n:02}.py").write_text("")
    ctx = ToolContext(root=ws, limits=ToolLimits(glob_max_results=5))
    lines = (await call(registry, ctx, "glob", pattern="*.py")).content.split("\n")
    assert lines[:5] == ["m00.py", "m01.py", "m02.py", "m03.py", "m04.py"]
    assert lines[5:] == ["… 10 more files not shown; use a narrower pattern or path"]
