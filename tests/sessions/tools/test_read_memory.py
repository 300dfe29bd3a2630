"""Properties of the session's read memory (DESIGN §5 "Re-reads"): what a shortened re-read leaves out is exactly
what an earlier result above already showed, whatever the file and the ranges."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from sessions.tools.read_memory import FileView, FileWrite, ReadMemory

LINES = st.lists(st.sampled_from(["a", "b", "c", "def f():", "    return 1", ""]), min_size=1, max_size=40)


def _view(lines: list[str], first: int, last: int, sha: str) -> FileView:
    return FileView(path="m.py", sha256=sha, lines=tuple(lines), first=first, last=last)


def _shown(text: str) -> dict[int, str]:
    return {int(m[1]): m[2] for m in re.finditer(r"^(\d+)\t(.*)$", text, re.M)}


@given(LINES, st.data())
def test_an_overlapping_read_of_an_unchanged_file_leaves_out_only_lines_shown_before(
    lines: list[str], data: st.DataObject
) -> None:
    n = len(lines)
    a1, b1 = sorted(data.draw(st.tuples(st.integers(1, n), st.integers(1, n))))
    a2, b2 = sorted(data.draw(st.tuples(st.integers(1, n), st.integers(1, n))))
    memory = ReadMemory()
    full = lambda a, b: "\n".join(f"{i}\t{lines[i - 1]}" for i in range(a, b + 1))  # noqa: E731
    memory.present("c1", _view(lines, a1, b1, "s"), full(a1, b1), 0)
    second = memory.present("c2", _view(lines, a2, b2, "s"), full(a2, b2), 0)
    shown = _shown(second)
    assert all(lines[i - 1] == text for i, text in shown.items())
    assert set(shown) | set(range(a1, b1 + 1)) >= set(range(a2, b2 + 1))
    assert set(shown) <= set(range(a2, b2 + 1))


@given(LINES, LINES)
def test_after_an_own_edit_every_line_left_out_stands_unchanged_in_what_was_shown(
    old: list[str], new: list[str]
) -> None:
    memory = ReadMemory()
    memory.present("c1", _view(old, 1, len(old), "old"), "", 0)
    memory.wrote("c2", FileWrite(path="m.py", before="old", after="new"))
    text = memory.present("c3", _view(new, 1, len(new), "new"), "FULL", 0)
    if old == new or text == "FULL":
        return
    shown = _shown(text)
    assert all(new[i - 1] == line for i, line in shown.items())
    left_out = [new[i - 1] for i in range(1, len(new) + 1) if i not in shown]
    assert all(line in old for line in left_out)  # each stands in the earlier result
    assert "c1" in text and "c2" in text
