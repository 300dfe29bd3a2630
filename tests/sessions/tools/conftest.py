from __future__ import annotations

from pathlib import Path

import pytest

from sessions.tools import ToolContext, ToolRegistry, default_registry


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(root=ws)


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry(use_ripgrep=False)
