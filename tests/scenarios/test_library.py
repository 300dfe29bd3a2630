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


def test_the_flagship_sends_no_request_only_for_closing_words() -> None:
    """submit_plan, report_step and goal_verdict end their turns (DESIGN §5 "Turn boundaries"): on the 4-step diamond
    the planner makes 4 requests for plan + verdict and the executor at most 5 per step. The emulator serves each
    session's replies in order, so a request for closing words would find no reply and fail the replay."""
    (path,) = [p for p in library_paths() if p.stem == "flagship"]
    report = replay(load_scenario(path))
    assert report.ok, report.text_report()
    assert report.sessions["planner"].requests == 4  # list_dir, read_file × 2 in one reply, submit_plan, goal_verdict
    assert report.sessions["executor"].requests == 18  # S1 5, S2 5 (the flash reply with the marker, then pro), 4, 4
    assert report.steps_total == 4 and report.sessions["executor"].requests <= 5 * report.steps_total
