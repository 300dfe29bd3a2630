"""Test modules share helpers through tests/support/ (and the ``*_support`` modules beside them), never by importing
another test module or a conftest: a helper imported from a test module drags its tests and fixtures along."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported_modules(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
            names += ["." * node.level + (node.module + "." if node.module else "") + a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for name in _imported_modules(path):
            last = name.rsplit(".", 1)[-1]
            if last.startswith("test_") or last == "conftest":
                found.append(f"{path.relative_to(TESTS)} imports {name}")
    assert not found, "move the helper to tests/support/:\n" + "\n".join(found)
