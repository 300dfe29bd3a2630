"""The storm guard: the third identical call within six is suppressed, a second storm ends the turn."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.repair import StormGuard


def test_third_identical_call_is_suppressed_with_a_stub() -> None:
    guard = StormGuard()
    args = {"path": "src/app.py"}
    assert guard.check("read_file", args).kind == "allow"
    assert guard.check("read_file", dict(args)).kind == "allow"
    verdict = guard.check("read_file", {"path": "src/app.py"})
    assert verdict.kind == "suppress"
    assert "Change approach" in verdict.summary
    assert "read_file" in verdict.summary


def test_argument_key_order_does_not_hide_a_storm() -> None:
    guard = StormGuard()
    guard.check("grep", {"pattern": "x", "path": "."})
    guard.check("grep", {"path": ".", "pattern": "x"})
    assert guard.check("grep", {"pattern": "x", "path": "."}).kind == "suppress"


def test_calls_far_enough_apart_are_allowed() -> None:
    guard = StormGuard()
    kinds = []
    for i in range(12):
        name = "bash" if i % 4 == 0 else f"other_{i}"
        kinds.append(guard.check(name, {"command": "pytest"}).kind)
    assert set(kinds) == {"allow"}  # bash at 0, 4, 8: never three within six


def test_second_storm_ends_the_turn_with_a_summary() -> None:
    guard = StormGuard()
    for _ in range(2):
        guard.check("list_dir", {"path": "."})
    assert guard.check("list_dir", {"path": "."}).kind == "suppress"
    verdict = guard.check("list_dir", {"path": "."})
    assert verdict.kind == "end_turn"
    assert "Turn ended by the storm guard" in verdict.summary
    assert 'list_dir {"path":"."}' in verdict.summary
    assert guard.turn_ended
    assert guard.check("read_file", {"path": "new"}).kind == "end_turn"


def test_reset_turn_starts_clean() -> None:
    guard = StormGuard()
    for _ in range(4):
        guard.check("list_dir", {})
    assert guard.turn_ended
    guard.reset_turn()
    assert not guard.turn_ended and guard.storms == 0
    assert guard.check("list_dir", {}).kind == "allow"
    assert guard.check("list_dir", {}).kind == "allow"


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        StormGuard(threshold=1)


calls = st.lists(
    st.tuples(st.sampled_from(["read_file", "grep", "bash"]), st.sampled_from([{}, {"p": 1}, {"p": 2}])),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(seq=calls)
def test_third_identical_call_in_any_window_of_six_is_stopped(seq: list[tuple[str, dict[str, int]]]) -> None:
    guard = StormGuard()
    window: deque[tuple[str, str]] = deque(maxlen=6)
    storms = 0
    for name, args in seq:
        key = (name, repr(sorted(args.items())))
        window.append(key)
        verdict = guard.check(name, args)
        if storms >= 2:
            assert verdict.kind == "end_turn"
        elif window.count(key) >= 3:
            storms += 1
            assert verdict.kind == ("suppress" if storms == 1 else "end_turn")
        else:
            assert verdict.kind == "allow"


@settings(max_examples=100, deadline=None)
@given(seq=st.lists(st.tuples(st.text(max_size=5), st.integers()), unique=True, max_size=50))
def test_distinct_calls_are_never_suppressed(seq: list[tuple[str, int]]) -> None:
    guard = StormGuard()
    assert all(guard.check(name, {"n": n}).kind == "allow" for name, n in seq)


def test_an_edit_test_loop_is_progress_not_a_storm() -> None:
    guard = StormGuard(mutating=frozenset({"edit_file", "bash"}))
    verdicts = []
    for i in range(4):
        verdicts.append(guard.check("edit_file", {"path": "a.py", "new": f"attempt {i}"}).kind)
        verdicts.append(guard.check("bash", {"command": "python -m pytest -q"}).kind)
    assert verdicts == ["allow"] * 8


def test_the_same_change_or_the_same_test_three_times_is_still_a_storm() -> None:
    guard = StormGuard(mutating=frozenset({"edit_file", "bash"}))
    kinds = [guard.check("bash", {"command": "python -m pytest -q"}).kind for _ in range(3)]
    assert kinds == ["allow", "allow", "suppress"]
    guard.reset_turn()
    edit = {"path": "a.py", "new": "same"}
    kinds = [k for _ in range(3) for k in (guard.check("edit_file", edit).kind, guard.check("read_file", {}).kind)]
    assert kinds[4] == "suppress"
