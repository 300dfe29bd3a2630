"""DESIGN §2: imports point only down the table. A module that wants to import upward is in the wrong package."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("orchestrator", "sessions", "plans", "scenarios")
ALLOWED = {
    "sessions": set(),
    "plans": set(),
    "scenarios": {"sessions"},
    "orchestrator": {"sessions", "plans", "scenarios"},
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(OURS)


@pytest.mark.parametrize("package", OURS)
def test_imports_point_down_the_table(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(_imports(path) - ALLOWED[package] - {package})
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}
