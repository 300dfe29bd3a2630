"""Every scenario of ``scenarios/library/`` is a test: replayed offline with the real orchestrator against the
emulator, and failed when any expectation (status, files, commands, escalations, the cache guard, cost …) does not
hold. The failure message is the replay report, with a diff for each file that differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.replay.runner import replay
from scenarios.format import library_paths, load_scenario


@pytest.mark.parametrize("path", library_paths(), ids=lambda p: p.name.removesuffix(".json"))
def test_scenario(path: Path) -> None:
    report = replay(load_scenario(path))
    if not report.ok:
        pytest.fail(report.text_report(), pytrace=False)
