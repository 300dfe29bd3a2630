"""HeadTail: bounded memory, and the rendered text is an honest head + marker + tail of the stream."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from sessions.tools.shell.bounded import HeadTail

MARKER = re.compile(r"\[… (\d+) bytes \((\d+) lines\) cut …\]\n")


@given(
    chunks=st.lists(st.text(alphabet="ab\n", max_size=200).map(str.encode), max_size=30),
    head=st.integers(0, 300),
    tail=st.integers(0, 300),
)
@example(chunks=[b"a\n"], head=1, tail=0)  # the head "a" rendered with its separator looks like the head "a\n"
def test_head_and_tail_are_exact_and_the_marker_counts_the_cut(chunks: list[bytes], head: int, tail: int) -> None:
    capture = HeadTail(head, tail, full_cap=10**9)
    for chunk in chunks:
        capture.feed(chunk)
    data = b"".join(chunks)
    text = capture.text()
    assert capture.total == len(data)
    assert capture.full_text() == data.decode()
    if not capture.bounded:
        assert text == data.decode()
        return
    match = MARKER.search(text)
    assert match is not None
    rendered_head, kept_tail = text[: match.start()], text[match.end() :]
    whole = data.decode()
    cut = int(match[1])
    assert whole.endswith(kept_tail) and len(kept_tail) <= tail
    # The marker says how much was cut, so it fixes the kept head; the rendering only adds a newline to end its line.
    kept_head = whole[: len(whole) - cut - len(kept_tail)]
    assert len(kept_head) <= head
    separator = "" if kept_head.endswith("\n") or not kept_head else "\n"
    assert rendered_head == kept_head + separator
    assert int(match[2]) == whole[len(kept_head) : len(whole) - len(kept_tail)].count("\n")


def test_memory_stays_bounded() -> None:
    capture = HeadTail(10, 10)
    for _ in range(10_000):
        capture.feed(b"x" * 1000)
    assert capture.total == 10_000_000
    assert capture.full_text() is None
    assert capture.text() == "x" * 10 + "\n[… 9999980 bytes (0 lines) cut …]\n" + "x" * 10
