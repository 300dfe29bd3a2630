"""The words the model reads from the repair layer, and the edges mutation testing (bench/mutation_score.py) found
unpinned: a cut-off array or string is an error (never the arguments), the cut-off hint only when something was cut,
the storm guard's limits, its summary's shortening and the summary of a turn it ended."""

from __future__ import annotations

import pytest

from sessions.repair import ModelArgumentsError, StormGuard, parse_arguments
from sessions.repair.storm import call_key
from sessions.repair.truncation import MAX_REPAIR_CHARS

HINT = (
    " Your reply was cut off at the output limit (finish_reason=length): send the call again with shorter "
    "arguments (for a large file, write it in several smaller parts)."
)
UNREPAIRABLE = (
    "The arguments are not valid JSON ({}) and could not be repaired into a JSON object. "
    'Send the call again with the arguments as one complete JSON object: {{"parameter": value, ...}}.'
)


def error_of(raw: str, *, truncated: bool) -> str:
    with pytest.raises(ModelArgumentsError) as raised:
        parse_arguments(raw, truncated=truncated)
    return str(raised.value)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("[1, 2", "Expecting ',' delimiter (line 1, column 6)"),
        ('["a", "b', "Unterminated string starting at (line 1, column 7)"),
        ('"abc', "Unterminated string starting at (line 1, column 1)"),
        ("nonsense", "Expecting value (line 1, column 1)"),
    ],
    ids=["array", "string-in-array", "string", "prose"],  # plain ids: mutmut runs tests by id
)
def test_a_cut_off_array_or_string_is_an_error_not_the_arguments(raw: str, why: str) -> None:
    assert error_of(raw, truncated=True) == UNREPAIRABLE.format(why) + HINT
    assert error_of(raw, truncated=False) == UNREPAIRABLE.format(why)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("[1,2]", "array"), ('"abc"', "string"), ("true", "boolean"), ("null", "null"), ("3.5", "number")],
    ids=["array", "string", "boolean", "null", "number"],
)
def test_json_that_is_not_an_object_names_its_kind(raw: str, kind: str) -> None:
    message = f'The arguments must be one JSON object, got a JSON {kind}. Send them as {{"parameter": value, ...}}.'
    assert error_of(raw, truncated=False) == message
    assert error_of(raw, truncated=True) == message + HINT


def test_the_cut_off_hint_follows_every_error_of_a_cut_reply_and_no_other() -> None:
    deep = "[" * 100_000
    assert error_of(deep, truncated=False) == "The arguments nest too deeply to parse; send a flatter JSON object."
    assert error_of(deep, truncated=True).endswith(". " + HINT.strip())
    glued = '{"a":1}{"b":2}'
    several = (
        'The arguments hold 2 different JSON objects one after another ({"a":1}; {"b":2}); a call takes exactly '
        "one. Did you mean 2 calls? Send each object as the arguments of its own tool call."
    )
    assert error_of(glued, truncated=False) == several
    assert error_of(glued, truncated=True) == several + HINT
    big = "x" * (MAX_REPAIR_CHARS + 1)
    too_large = (
        f"The arguments are not valid JSON (Expecting value (line 1, column 1)) and, at {MAX_REPAIR_CHARS + 1} "
        "characters, too large to repair. Send the call again with valid JSON arguments."
    )
    assert error_of(big, truncated=False) == too_large
    assert error_of(big, truncated=True) == too_large + HINT


def test_repair_stops_at_the_size_limit() -> None:
    malformed = "{'a': 1,}"
    at_limit = malformed + " " * (MAX_REPAIR_CHARS - len(malformed))
    assert parse_arguments(at_limit).args == {"a": 1}
    with pytest.raises(ModelArgumentsError, match="too large to repair"):
        parse_arguments(at_limit + " ")


def test_what_parses_says_whether_it_was_repaired_and_how_many_copies_there_were() -> None:
    assert parse_arguments('{"a": 1}') == parse_arguments(' {"a": 1} ')
    plain = parse_arguments('{"a": 1}')
    assert (plain.args, plain.repaired, plain.copies) == ({"a": 1}, False, 1)
    cut = parse_arguments('{"a": "xy', truncated=True)
    assert (cut.args, cut.repaired, cut.copies) == ({"a": "xy"}, True, 1)
    fixed = parse_arguments("{a: 1,}")
    assert (fixed.args, fixed.repaired) == ({"a": 1}, True)
    twice = parse_arguments('{"a":1} {"a":1}\n{"a":1}')
    assert (twice.args, twice.repaired, twice.copies) == ({"a": 1}, False, 3)
    blank = parse_arguments(" \n\t")
    assert (blank.args, blank.repaired, blank.copies) == ({}, False, 1)


def test_the_storm_guards_limits() -> None:
    guard = StormGuard()
    assert (guard.window, guard.threshold, guard.storms_per_turn, guard.mutating) == (6, 3, 2, frozenset())
    StormGuard(window=1, threshold=2, storms_per_turn=1)  # the smallest guard there is
    for bad in ({"window": 0}, {"threshold": 1}, {"storms_per_turn": 0}):
        with pytest.raises(ValueError) as raised:
            StormGuard(**bad)  # type: ignore[arg-type]
        assert str(raised.value) == "StormGuard needs window >= 1, threshold >= 2 and storms_per_turn >= 1"


def test_a_one_storm_turn_ends_at_its_first_storm() -> None:
    guard = StormGuard(window=4, threshold=2, storms_per_turn=1)
    assert guard.check("grep", {"p": 1}).kind == "allow"
    verdict = guard.check("grep", {"p": 1})
    assert verdict.kind == "end_turn" and guard.turn_ended and guard.storms == 1
    assert verdict.summary == (
        "Turn ended by the storm guard: 1 storms of identical tool calls in this turn (the same call 2 times within "
        '4 calls), the last one after a warning. Repeated calls: grep {"p":1}. The calls were not run again.'
    )
    assert guard.check("other", {}) == verdict  # the turn stays ended, with the same summary


def test_the_suppressed_calls_stub_is_what_the_model_reads() -> None:
    guard = StormGuard(window=5)
    guard.check("bash", {"command": "pytest"})
    guard.check("bash", {"command": "pytest"})
    stub = guard.check("bash", {"command": "pytest"})
    assert stub.kind == "suppress"
    assert stub.summary == (
        "Not run: this is call number 3 to bash with exactly the same arguments within the last 5 tool calls, so "
        "its result would not change. Change approach: use the results you already have, try different arguments "
        "or a different tool, or say what is blocking you. Another storm of repeated calls ends this turn."
    )
    assert guard.storms == 1 and not guard.turn_ended


def test_the_ended_turn_summary_lists_each_storm_once_and_shortens_long_arguments() -> None:
    guard = StormGuard(storms_per_turn=3)
    long_args = {"content": "x" * 200}
    exact = {"content": "y" * (120 - len('{"content":""}'))}  # exactly 120 characters of JSON: shown whole
    for args in (long_args, long_args, long_args, exact, exact, exact, long_args):
        verdict = guard.check("write_file", args)
    assert verdict.kind == "end_turn" and guard.storms == 3
    shown_long = ('{"content":"' + "x" * 200)[:117] + "..."
    shown_exact = '{"content":"' + exact["content"] + '"}'
    assert len(shown_exact) == 120
    assert verdict.summary == (
        "Turn ended by the storm guard: 3 storms of identical tool calls in this turn (the same call 3 times within "
        f"6 calls), the last one after a warning. Repeated calls: write_file {shown_long}; write_file {shown_exact}. "
        "The calls were not run again."
    )
    assert guard.summary() == verdict.summary


def test_the_window_forgets_calls_older_than_its_size() -> None:
    guard = StormGuard(window=3, threshold=2)
    assert guard.check("a", {}).kind == "allow"
    guard.check("b", {})
    guard.check("c", {})
    assert guard.check("a", {}).kind == "allow"  # the first "a" fell out of the window of three
    assert guard.check("a", {}).kind == "suppress"


def test_a_mutating_call_seen_in_the_window_is_not_progress() -> None:
    guard = StormGuard(mutating=frozenset({"edit"}))
    guard.check("edit", {"x": 1})
    guard.check("test", {})
    guard.check("edit", {"x": 1})  # the same edit again: the window is kept
    assert guard.check("edit", {"x": 1}).kind == "suppress"
    fresh = StormGuard(mutating=frozenset({"edit"}))
    fresh.check("test", {})
    fresh.check("test", {})
    fresh.check("edit", {"x": 2})  # a new change: the earlier tests may now give other results
    assert fresh.check("test", {}).kind == "allow"
    assert fresh.check("test", {}).kind == "allow"


def test_a_calls_key_is_its_name_and_canonical_arguments() -> None:
    assert call_key("grep", {"b": 1, "a": "é"}) == 'grep\x00{"a":"é","b":1}'
    assert call_key("grep", {"p": 1.5}) == 'grep\x00{"p":1.5}'
    assert call_key("x", {"when": object}).startswith('x\x00{"when":"<class')


def test_errors_carry_no_cut_off_hint_unless_told_the_reply_was_cut() -> None:
    with pytest.raises(ModelArgumentsError) as raised:
        parse_arguments("[1, 2")
    assert "cut off" not in str(raised.value)


def test_an_object_followed_by_an_unfinished_other_is_an_error_that_says_one_call_one_object() -> None:
    several = (
        "The arguments hold several JSON objects one after another; a call takes exactly one. "
        "Send one tool call per object."
    )
    assert error_of('{"a":1} {"b":', truncated=False) == several
    assert error_of('{"a":1} {"b":', truncated=True) == several + HINT


def test_only_extra_data_that_is_another_object_is_taken_for_copies() -> None:
    assert parse_arguments('{"a":1}\u00a0{"a":1}').copies == 2  # any blank between the copies
    assert parse_arguments('{"a" {"b": 1}}').repaired  # a missing colon before an object: repaired, not "several"


def test_an_error_json_raises_without_a_position_is_shown_as_is() -> None:
    digits = "[" + "1" * 5000 + "]"
    message = error_of(digits, truncated=False)
    assert message.startswith(
        "The arguments are not valid JSON (Exceeds the limit (4300 digits) for integer string conversion"
    )


def test_a_guard_says_plainly_whether_its_turn_ended() -> None:
    guard = StormGuard()
    assert guard.turn_ended is False
    for _ in range(4):
        guard.check("x", {})
    assert guard.turn_ended is True
    guard.reset_turn()
    assert guard.turn_ended is False


def test_arguments_of_121_characters_are_shortened() -> None:
    guard = StormGuard(storms_per_turn=1)
    args = {"content": "z" * (121 - len('{"content":""}'))}
    for _ in range(3):
        verdict = guard.check("write_file", args)
    shown = ('{"content":"' + args["content"] + '"}')[:117] + "..."
    assert f"Repeated calls: write_file {shown}. " in verdict.summary
