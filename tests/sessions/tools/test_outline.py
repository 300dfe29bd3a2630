"""``read_file`` with ``outline=true`` lists every top-level class and function with its line range (DESIGN §5
"Re-reads"), checked against :mod:`ast` on one of the project's own modules and on a module of a real package."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest

import sessions.tools.files.edit_file as own_module
from sessions.tools import ToolContext
from sessions.tools.files.read_file import ReadFileArgs as ReadArgs
from sessions.tools.files.read_file import ReadFileTool

MODULES = [Path(own_module.__file__), Path(httpx.__file__).parent / "_client.py"]


def _expected(source: str) -> list[tuple[int, int, str]]:
    rows = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            rows.append((first, node.end_lineno, node.name))
    return rows


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
async def test_the_outline_lists_every_top_level_definition_with_its_line_range(module: Path) -> None:
    result = await ReadFileTool().run(ReadArgs(path=module.name, outline=True), ToolContext(root=module.parent))
    header, *rows = result.content.splitlines()
    assert header.startswith(f"Outline of {module.name} (python, ")
    top = []
    for row in rows:
        span, label = row.split("\t")
        if not label.startswith(" "):
            first, last = span.split("-")
            top.append((int(first), int(last), label.split()[-1]))
    source = module.read_text()  # noqa: ASYNC240 (a small module, read once)
    expected = _expected(source)
    assert len(expected) >= 3 and top == expected
    text = source.splitlines()
    for first, _last, name in top:  # the range starts at the definition (or its first decorator)
        assert name in text[first - 1] or text[first - 1].lstrip().startswith("@")


async def test_methods_are_indented_under_their_class_and_other_files_have_no_outline(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "class A:\n    @property\n    def x(self):\n        return 1\n\nasync def g():\n    pass\n"
    )
    (tmp_path / "notes.txt").write_text("plain text\n")
    (tmp_path / "bad.py").write_text("def (:\n")
    ctx = ToolContext(root=tmp_path)
    tool = ReadFileTool()
    outline = (await tool.run(ReadArgs(path="m.py", outline=True), ctx)).content
    assert outline.splitlines()[1:] == ["1-4\tclass A", "2-4\t  def x", "6-7\tasync def g"]
    assert (await tool.run(ReadArgs(path="notes.txt", outline=True), ctx)).content.startswith("No outline for")
    assert "does not parse as Python (line 1)" in (await tool.run(ReadArgs(path="bad.py", outline=True), ctx)).content
