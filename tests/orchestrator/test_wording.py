"""Counts read as English: ``1 request``, ``2 requests``."""

from __future__ import annotations

from orchestrator.ui.stream import summary_line
from orchestrator.ui.wording import counted, shorten


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
