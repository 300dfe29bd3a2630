"""Counts read as English: ``1 request``, ``2 requests``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.text.wording import counted, shorten, usd
from orchestrator.ui.stream import summary_line


def test_counted_nouns() -> None:
    assert [counted(n, "request") for n in (0, 1, 2)] == ["0 requests", "1 request", "2 requests"]
    assert counted(1.5, "minute") == "1.5 minutes"
    assert counted(1_234_567, "token") == "1234567 tokens"  # never "1.23457e+06"
    assert counted(3, "entry", "entries") == "3 entries" and counted(1, "entry", "entries") == "1 entry"


def test_a_run_of_one_request_says_one_request() -> None:
    assert summary_line("done", 1, 0.0002, 0.0).plain == "done · 1 request · session $0.0002 · cache 0.0%"
    assert " · 4 requests · " in summary_line("done", 4, 0.0002, 0.5).plain


def test_shorten_puts_text_on_one_line_and_cuts_it_with_an_ellipsis() -> None:
    assert shorten("  a\n\tb  c ", 10) == "a b c"
    assert shorten("abcdefghij", 10) == "abcdefghij"
    assert shorten("abcdefghijk", 10) == "abcdefghi…" and len(shorten("x" * 500, 80)) == 80
    assert shorten("abc", 0) == "…"


@given(st.text(), st.integers(min_value=0, max_value=200))
def test_shorten_gives_one_printable_line_within_the_limit(text: str, limit: int) -> None:
    line = shorten(text, limit)
    assert len(line) <= max(limit, 1) and line.isprintable() and "\n" not in line
    assert line == shorten(line, limit)  # a shortened line is left as it is


def test_shorten_turns_control_characters_into_spaces_and_drops_the_space_before_the_cut() -> None:
    assert shorten("run\x1b[2K  it\r\nnow", 80) == "run [2K it now"
    assert shorten("abcd efgh", 6) == "abcd…"


@given(st.floats(min_value=1e-9, max_value=1000, allow_nan=False))
def test_a_cost_is_never_shown_as_zero_and_keeps_two_significant_digits(amount: float) -> None:
    """Issue 48 item 25: four decimals rounded a whole chat to $0.0000."""
    shown = usd(amount)
    assert shown.startswith("$") and float(shown[1:]) > 0
    assert abs(float(shown[1:]) - amount) <= max(0.00005, amount * 0.05)


def test_costs_of_a_cent_and_more_keep_four_decimals() -> None:
    assert usd(0.0123) == "$0.0123" and usd(0) == "$0.0000" and usd(0.0000312) == "$0.000031"
