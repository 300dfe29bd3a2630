"""Fixtures of the sandbox tests: the real bubblewrap (tests/support/bwrap.py says when a missing one fails or skips)
and a workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bwrap import require_bwrap


@pytest.fixture
def bwrap() -> str:
    return require_bwrap()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root
