"""glob on real trees through both listings (``rg --files`` and the Python walk): same results, .gitignore honoured
at every level, the literal prefix of a pattern never widening or narrowing what matches (issue 11 item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions.tools import ToolContext, default_registry
from sessions.tools.search.glob_tool import literal_prefix
from sessions.tools.search.ripgrep import find_rg
from tests.support.tools import call

BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")),
]


def make_tree(ws: Path) -> None:
    files = {
        ".gitignore": "*.log\nbuild/\nnode_modules/\n/top-only.py\n",
        "top-only.py": "",
        "src/top-only.py": "",
        "src/app.py": "",
        "src/app.log": "",
        "src/.hidden.py": "",
        "src/pkg3/a/file1.py": "",
        "src/pkg3/b/c/file1.py": "",
        "src/pkg3/file1.py": "",
        "src/pkg30/file1.py": "",
        "src/pkg3/.gitignore": "gen/\n*.tmp\n!keep.tmp\n",
        "src/pkg3/gen/file1.py": "",
        "src/pkg3/x.tmp": "",
        "src/pkg3/keep.tmp": "",
        "src/web/node_modules/lib/file1.py": "",
        "build/file1.py": "",
        "build/sub/file1.py": "",
        ".git/file1.py": "",
        ".reasonix/file1.py": "",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "linked").symlink_to(ws / "src")


CASES = {
    ("file1.py", "."): "src/pkg3/a/file1.py\nsrc/pkg3/b/c/file1.py\nsrc/pkg3/file1.py\nsrc/pkg30/file1.py",
    ("src/pkg3/**/file1.py", "."): "src/pkg3/a/file1.py\nsrc/pkg3/b/c/file1.py\nsrc/pkg3/file1.py",
    ("src/pkg3/*/file1.py", "."): "src/pkg3/a/file1.py",
    ("pkg3/**/file1.py", "src"): "src/pkg3/a/file1.py\nsrc/pkg3/b/c/file1.py\nsrc/pkg3/file1.py",
    ("src/**/*.log", "."): "no files match 'src/**/*.log' under .",
    ("src/pkg3/*.tmp", "."): "src/pkg3/keep.tmp",
    ("*.tmp", "src/pkg3"): "src/pkg3/keep.tmp",
    ("src/web/**/*.py", "."): "no files match 'src/web/**/*.py' under .",
    ("**/*.py", "src/web"): "no files match '**/*.py' under src/web",
    ("build/**/*.py", "."): "no files match 'build/**/*.py' under .",
    ("**/*.py", "build"): "build/file1.py\nbuild/sub/file1.py",
    ("sub/*.py", "build"): "build/sub/file1.py",
    ("linked/*.py", "."): "no files match 'linked/*.py' under .",
    ("top-only.py", "."): "src/top-only.py",
    ("/src/*.py", "."): "src/.hidden.py\nsrc/app.py\nsrc/top-only.py",
    ("src/nowhere/*.py", "."): "no files match 'src/nowhere/*.py' under .",
    (".git/*.py", "."): "no files match '.git/*.py' under .",
    ("*.py", "linked/pkg3/a"): "src/pkg3/a/file1.py",
}


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_glob_honours_every_gitignore_whatever_the_prefix(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    registry = default_registry(use_ripgrep=use_rg)
    for (pattern, path), expected in CASES.items():
        result = await call(registry, ctx, "glob", pattern=pattern, path=path)
        assert (pattern, path, result.content) == (pattern, path, expected)


def test_literal_prefix() -> None:
    assert literal_prefix("src/pkg3/**/file1.py") == ["src", "pkg3"]
    assert literal_prefix("/src/*.py") == ["src"]
    assert literal_prefix("src/pkg/") == ["src"]
    assert literal_prefix("*.py") == literal_prefix("**/x/*.py") == literal_prefix("file.py") == []
    assert literal_prefix("src/p*/x.py") == ["src"]
    assert literal_prefix("!src/x.py") == literal_prefix("../x/y.py") == []


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_in_a_folder_honours_the_root_gitignore(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    (ws / "src/app.log").write_text("NEEDLE\n")
    (ws / "src/web/node_modules/lib/file1.py").write_text("NEEDLE\n")
    (ws / "src/app.py").write_text("NEEDLE\n")
    result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="NEEDLE", path="src")
    assert result.content == "src/app.py:1:NEEDLE"
