"""HeadTail: bounded memory, and the rendered text is an honest head + marker + tail of the stream."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from sessions.tools.bounded import HeadTail

MARKER = re.compile(r"\[… (\d+) bytes \((\d+) lines\) cut …\]\n")


@given(
    chunks=st.lists(st.text(alphabet="ab\n", max_size=200).map(str.encode), max_size=30),
    head=st.integers(0, 300),
    tail=st.integers(0, 300),
)
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
    kept_head, kept_tail = text[: match.start()], text[match.end() :]
    if kept_head and not data.decode().startswith(kept_head):
        kept_head = kept_head.removesuffix("\n")  # a separator newline added before the marker
    whole = data.decode()
    assert whole.startswith(kept_head) and whole.endswith(kept_tail)
    assert len(kept_head) <= head and len(kept_tail) <= tail
    cut = int(match[1])
    assert len(kept_head) + cut + len(kept_tail) == len(whole)
    assert int(match[2]) == whole[len(kept_head) : len(whole) - len(kept_tail)].count("\n")


def test_memory_stays_bounded() -> None:
    capture = HeadTail(10, 10)
    for _ in range(10_000):
        capture.feed(b"x" * 1000)
    assert capture.total == 10_000_000
    assert capture.full_text() is None
    assert capture.text() == "x" * 10 + "\n[… 9999980 bytes (0 lines) cut …]\n" + "x" * 10
