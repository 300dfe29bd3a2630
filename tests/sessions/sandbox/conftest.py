"""Fixtures of the sandbox tests: the real bubblewrap (tests/support/bwrap.py says when a missing one fails or skips)
and a workspace."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bwrap import require_bwrap
from tests.support.real_home import REAL_HOME


@pytest.fixture
def bwrap() -> str:
    return require_bwrap()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp and /run, whose sockets bubblewrap would still show."""
    path = Path(tempfile.mkdtemp(prefix="reasonix-pins-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def a_home() -> Iterator[Path]:
    """A directory under /home: a new home as root, a folder in the ordinary user's real home otherwise (a test
    that takes it is marked ``real_home``)."""
    parent = Path("/home") if os.access("/home", os.W_OK) else REAL_HOME
    if not (parent == Path("/home") or str(parent).startswith("/home/")):
        pytest.skip("needs a home under /home")
    path = Path(tempfile.mkdtemp(prefix="reasonix-pins-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
