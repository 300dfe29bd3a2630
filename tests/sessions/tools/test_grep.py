"""grep on real trees, through the pure-Python path (always) and ripgrep (when it is on PATH): same results."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sessions.tools import ToolContext, ToolLimits, default_registry
from tests.sessions.tools.helpers import call

HAVE_RG = shutil.which("rg") is not None
BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not on PATH")),
]


def make_tree(ws: Path) -> None:
    files = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n",
        "src/app.py": "import os\nNEEDLE = 1\nprint(NEEDLE)\n",
        "src/.hidden.py": "needle_hidden = True\n",
        "src/sub/.gitignore": "generated.py\n",
        "src/sub/generated.py": "NEEDLE generated\n",
        "src/sub/kept.py": "x = 'NEEDLE in sub'\n",
        "debug.log": "NEEDLE in a log\n",
        "keep.log": "NEEDLE kept log\n",
        "build/out.py": "NEEDLE built\n",
        ".git/config": "NEEDLE in git\n",
        ".reasonix/journal.jsonl": "NEEDLE in journal\n",
        "README.md": "needle lower\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "blob.bin").write_bytes(b"NEEDLE\x00\x01binary")


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_honours_gitignore(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="NEEDLE")
    assert result.content == "\n".join(
        [
            "keep.log:1:NEEDLE kept log",
            "src/app.py:2:NEEDLE = 1",
            "src/app.py:3:print(NEEDLE)",
            "src/sub/kept.py:1:x = 'NEEDLE in sub'",
        ]
    )
    assert result.data == {"matches": 4}


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_options(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    registry = default_registry(use_ripgrep=use_rg)
    insensitive = await call(registry, ctx, "grep", pattern="needle_h|needle l", ignore_case=True)
    assert insensitive.content == "README.md:1:needle lower\nsrc/.hidden.py:1:needle_hidden = True"
    only_py = await call(registry, ctx, "grep", pattern="NEEDLE", glob="*.py", path="src")
    assert only_py.content == (
        "src/app.py:2:NEEDLE = 1\nsrc/app.py:3:print(NEEDLE)\nsrc/sub/kept.py:1:x = 'NEEDLE in sub'"
    )
    one_file = await call(registry, ctx, "grep", pattern=r"^import \w+$", path="src/app.py")
    assert one_file.content == "src/app.py:1:import os"
    none = await call(registry, ctx, "grep", pattern="absent_thing", path="src")
    assert none.content == "no matches for 'absent_thing' in src" and not none.is_error
    bad = await call(registry, ctx, "grep", pattern="(unclosed")
    assert bad.is_error
    missing = await call(registry, ctx, "grep", pattern="x", path="nowhere")
    assert missing.is_error and missing.content.startswith("not found: 'nowhere'")


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_caps_matches_and_long_lines(ws: Path, use_rg: bool) -> None:
    (ws / "many.txt").write_text("".join(f"hit {n}\n" for n in range(50)) + "hit " + "x" * 1000 + "\n")
    ctx = ToolContext(root=ws, limits=ToolLimits(grep_max_matches=3, grep_line_max_chars=20))
    result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="hit")
    assert result.content == (
        "many.txt:1:hit 0\nmany.txt:2:hit 1\nmany.txt:3:hit 2\n"
        "… 48 more matches not shown; narrow the pattern, path or glob"
    )
    long = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="x{10}")
    assert long.content == "many.txt:51:hit " + "x" * 16 + "…"


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not on PATH")
async def test_both_backends_agree_on_a_real_tree(ws: Path, ctx: ToolContext) -> None:
    make_tree(ws)
    for pattern in ("NEEDLE", "import", "e", r"\d"):
        py = await call(default_registry(use_ripgrep=False), ctx, "grep", pattern=pattern)
        rg = await call(default_registry(use_ripgrep=True), ctx, "grep", pattern=pattern)
        assert py.content == rg.content, pattern
