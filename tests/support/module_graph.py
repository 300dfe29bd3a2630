"""The modules of our packages and the imports between them, read from the source: the layout tests' shared view."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = ("orchestrator", "sessions", "plans", "scenarios")
DESIGN = ROOT / "docs" / "DESIGN.md"


def module_graph() -> dict[str, set[str]]:
    """Every module of ours (package ``__init__`` files aside: they only re-export) and the modules it imports, at
    module level, under ``TYPE_CHECKING`` or inside a function alike: a circle hidden in a function is still one."""
    modules: dict[str, Path] = {}
    for package in OURS:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] != "__init__":
                modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package_parts = name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package_parts[: len(package_parts) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def room_of(module: str) -> str:
    """The room of an ``orchestrator`` module: its first-level folder (``goal`` for
    ``orchestrator.goal.parallel.wave``), or the module itself for one at the top (``build``)."""
    return module.split(".")[1]
