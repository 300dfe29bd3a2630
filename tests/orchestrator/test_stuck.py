"""The no-progress detector: the same failure three times, rounds without new evidence, workspace fingerprints."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from orchestrator.policy.stuck import (
    ProgressTracker,
    StuckVerdict,
    normalize_failure,
    output_evidence,
    workspace_fingerprint,
)


def pytest_failure(duration: str, line: int, address: str, tmp: str) -> str:
    return (
        "\x1b[31mF\x1b[0m.                                                      [100%]\n"
        "=================================== FAILURES ===================================\n"
        f"{tmp}/test_calc.py:{line}: in test_add\n"
        "    assert add(2, 2) == 4\n"
        f"E   AssertionError: <calc.Adder object at {address}>\n"
        f"1 failed, 1 passed in {duration}s\n"
    )


RUN_1 = pytest_failure("0.12", 14, "0x7f3a2c1b9e80", "/tmp/pytest-of-dev/pytest-12/test_add0")
RUN_2 = pytest_failure("0.31", 15, "0x7f11aa07d310", "/tmp/pytest-of-dev/pytest-13/test_add0")
RUN_3 = pytest_failure("1.04", 17, "0x55d2e0c1a6f0", "/tmp/pytest-of-dev/pytest-14/test_add0")


def test_noise_between_runs_is_normalized_away() -> None:
    assert normalize_failure(RUN_1) == normalize_failure(RUN_2) == normalize_failure(RUN_3)
    assert normalize_failure("took 12ms at 2026-11-05 12:03:55.120") == normalize_failure(
        "took 7ms at 2026-11-06 09:00:01.004"
    )
    assert normalize_failure("commit 3f9a2b7c1d8e done") == normalize_failure("commit 9c0d1e2f3a4b done")
    assert normalize_failure("/tmp/tmpk2j3_ab9/x.py") == normalize_failure("/tmp/tmpzz81qx0a/x.py")


def test_different_failures_stay_different() -> None:
    assert normalize_failure("NameError: name 'foo' is not defined") != normalize_failure(
        "NameError: name 'bar' is not defined"
    )
    assert normalize_failure(RUN_1) != normalize_failure(RUN_1.replace("test_add", "test_sub"))


def test_same_failure_three_times_is_stuck() -> None:
    tracker = ProgressTracker()
    assert tracker.record_failure("S3", RUN_1) is None
    assert tracker.record_failure("S3", RUN_2) is None
    verdict = tracker.record_failure("S3", RUN_3)
    assert verdict == StuckVerdict(
        reason="the same failure three times on S3: E AssertionError: <calc.Adder object at 0x55d2e0c1a6f0>",
        step_id="S3",
    )


def test_reason_quotes_the_line_that_names_the_error() -> None:
    tracker = ProgressTracker(same_failure_limit=2)
    text = "\n\ncollecting ...\n\x1b[31mModuleNotFoundError:\x1b[0m No module named 'calc'\nmore\n"
    tracker.record_failure("S1", text)
    verdict = tracker.record_failure("S1", text)
    assert verdict is not None
    assert verdict.reason == "the same failure twice on S1: ModuleNotFoundError: No module named 'calc'"

    tracker.record_failure("S2", "  first   line  \nsecond")
    verdict = tracker.record_failure("S2", "  first   line  \nsecond")
    assert verdict is not None and verdict.reason.endswith("on S2: first line")


def test_same_text_on_different_steps_is_not_the_same_failure() -> None:
    tracker = ProgressTracker()
    for step in ("S1", "S2", "S3"):
        assert tracker.record_failure(step, RUN_1) is None
        assert tracker.record_failure(step, RUN_2) is None


def test_reset_gives_a_resumed_goal_a_fresh_chance() -> None:
    tracker = ProgressTracker()
    for run in (RUN_1, RUN_2):
        tracker.record_failure("S3", run)
    tracker.reset()
    assert tracker.record_failure("S3", RUN_3) is None


def test_rounds_without_new_evidence_are_stuck() -> None:
    tracker = ProgressTracker()
    assert tracker.record_round({"file:a.py:1"}) is None
    assert tracker.record_round({"file:a.py:1"}) is None  # nothing new: 1
    assert tracker.record_round(set()) is None  # 2
    assert tracker.record_round({"file:a.py:2"}) is None  # new content: the count restarts
    assert tracker.record_round({"file:a.py:1"}) is None  # back to old content is not new: 1
    assert tracker.record_round({"file:a.py:2", "file:a.py:1"}) is None  # 2
    verdict = tracker.record_round([])
    assert verdict == StuckVerdict(reason="3 rounds without new evidence (no new file content, no new command result)")
    assert tracker.idle_rounds == 3


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ProgressTracker(idle_round_limit=0)


def test_output_evidence_ignores_noise_but_not_content() -> None:
    assert output_evidence("pytest", "3 passed in 0.12s") == output_evidence("pytest", "3 passed in 0.40s")
    assert output_evidence("pytest", "1 failed") != output_evidence("pytest", "all passed")
    assert output_evidence("pytest", "ok") != output_evidence("ruff check", "ok")


def test_workspace_fingerprint_hashes_contents(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "src" / "b.py").write_text("x = 1\n")
    first = workspace_fingerprint(tmp_path, ["src/a.py", "src/b.py", "missing.txt"])
    assert len(first) == 3, "same content at two paths is two entries"
    assert "file:missing.txt:absent" in first
    assert workspace_fingerprint(tmp_path, ["./src/a.py", "src/b.py", "missing.txt"]) == first

    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    second = workspace_fingerprint(tmp_path, ["src/a.py", "src/b.py", "missing.txt"])
    assert len(second - first) == 1

    (tmp_path / "src" / "a.py").write_text("x = 1\n")  # back to the old content: nothing new
    assert workspace_fingerprint(tmp_path, ["src/a.py"]) <= first

    (tmp_path / "src" / "b.py").unlink()
    assert "file:src/b.py:absent" in workspace_fingerprint(tmp_path, ["src/b.py"])
    assert workspace_fingerprint(tmp_path, ["src"]) == {"file:src:directory"}


def test_workspace_fingerprint_expands_globs(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "one.py").write_text("1")
    (tmp_path / "pkg" / "two.py").write_text("2")
    entries = workspace_fingerprint(tmp_path, ["pkg/*.py", "docs/*.md"])
    assert {e.rsplit(":", 1)[0] for e in entries} == {"file:pkg/one.py", "file:pkg/two.py", "file:docs/*.md"}
    assert "file:docs/*.md:absent" in entries


def test_fingerprints_feed_the_round_detector(tmp_path: Path) -> None:
    tracker = ProgressTracker(idle_round_limit=2)
    target = tmp_path / "out.txt"
    target.write_text("attempt 1")
    assert tracker.record_round(workspace_fingerprint(tmp_path, ["out.txt"])) is None
    assert tracker.record_round(workspace_fingerprint(tmp_path, ["out.txt"])) is None
    verdict = tracker.record_round(workspace_fingerprint(tmp_path, ["out.txt"]))
    assert verdict is not None and verdict.reason.startswith("2 rounds without new evidence")


noisy_text = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.integers(min_value=0, max_value=10**12).map(str),
        st.integers(min_value=0, max_value=2**64).map(hex),
        st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b", "[", "m", "0x", "tmp", "#", ".", ":", "\n", "\t", " "]),
        st.text(alphabet="0123456789abcdef", min_size=6, max_size=12),
    ),
    max_size=30,
).map("".join)


@given(text=st.one_of(st.text(), noisy_text))
@example(text="tmpabcdefgh1")  # one pass gives "tmpabcdefgh#", which is a temp name only on the second
@example(text="\x1b\x1b[0m[m")  # removing a colour code joins another one
def test_normalization_is_idempotent(text: str) -> None:
    once = normalize_failure(text)
    assert normalize_failure(once) == once


@given(
    text=st.tuples(noisy_text.filter(bool), noisy_text).map(lambda p: p[0] * (9000 // len(p[0]) + 1) + p[1]),
)
@example(text=":" * 9001 + "000")  # the cut text shrinks to 8001 characters; it must not be cut a second time
@example(text="x" * 8002)  # longer than twice the kept part, shorter than a cut text
def test_long_texts_normalize_bounded_and_idempotent(text: str) -> None:
    once = normalize_failure(text)
    assert len(once) <= 8003
    assert normalize_failure(once) == once


@given(
    failures=st.lists(st.one_of(st.text(max_size=40), noisy_text), max_size=20, unique_by=normalize_failure),
    data=st.data(),
)
def test_distinct_failures_never_trigger(failures: list[str], data: st.DataObject) -> None:
    tracker = ProgressTracker()
    sequence = data.draw(st.permutations(failures + failures))  # each distinct failure twice, in any order
    for text in sequence:
        assert tracker.record_failure("S1", text) is None


@given(
    template=st.text(alphabet=st.characters(blacklist_categories=("Nd", "Cs")), min_size=1, max_size=40),
    numbers=st.lists(st.integers(min_value=0, max_value=10**9), min_size=3, max_size=3),
)
def test_a_failure_differing_only_by_numbers_triggers_on_the_third(template: str, numbers: list[int]) -> None:
    tracker = ProgressTracker()
    verdicts = [tracker.record_failure("S2", f"{template} after {n} ms") for n in numbers]
    assert verdicts[:2] == [None, None]
    assert verdicts[2] is not None and verdicts[2].step_id == "S2"


@given(rounds=st.lists(st.sets(st.text(max_size=8), min_size=1, max_size=4), max_size=30))
def test_rounds_that_each_add_something_new_never_trigger(rounds: list[set[str]]) -> None:
    tracker = ProgressTracker(idle_round_limit=1)
    for index, evidence in enumerate(rounds):
        assert tracker.record_round(evidence | {f"round-{index}"}) is None
    assert tracker.idle_rounds == 0
