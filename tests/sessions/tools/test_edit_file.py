"""edit_file: exact unique replacement, all-or-none, closest candidates on a mismatch, counts on ambiguity."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessions.tools import ToolContext, ToolRegistry
from sessions.tools.files.edit_file import Edit, apply_edits, closest_candidates
from tests.support.tools import call

SOURCE = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


async def test_several_edits_apply_in_order(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call(
        registry,
        ctx,
        "edit_file",
        path="m.py",
        edits=[
            {"old": "    return a + b", "new": "    total = a + b\n    return total"},
            {"old": "def sub(a, b):", "new": "def subtract(a, b):"},
        ],
    )
    assert result.content == "edited m.py: 2 replacements, 10 → 11 lines"
    text = (ws / "m.py").read_text()
    assert "    total = a + b\n    return total\n" in text and "def subtract(a, b):" in text


async def test_a_failing_edit_applies_none(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    path = ws / "m.py"
    path.write_text(SOURCE)
    before = path.stat()
    result = await call(
        registry,
        ctx,
        "edit_file",
        path="m.py",
        edits=[
            {"old": "def add(a, b):", "new": "def plus(a, b):"},  # would match
            {"old": "def mull(a, b):\n    return a ** b", "new": "x"},  # does not
        ],
    )
    assert result.is_error
    assert path.read_text() == SOURCE
    assert path.stat().st_ino == before.st_ino  # not even rewritten with the same bytes
    assert result.content.startswith(
        "edit 2: old text not found in m.py; no edits were applied, the file is unchanged."
    )
    # The closest candidate is the real text, with its line range, ready to copy.
    assert "--- lines 9-10 (similarity 0.9" in result.content
    assert "def mul(a, b):\n    return a * b" in result.content
    assert result.content.endswith(
        "Copy old exactly from the current file (read_file shows it) and call edit_file again."
    )


async def test_non_unique_match_says_how_many_and_where(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call(registry, ctx, "edit_file", path="m.py", edits=[{"old": "(a, b):", "new": "(x, y):"}])
    assert result.is_error
    assert result.content.startswith("old text occurs 3 times in m.py (lines 1, 5, 9); no edits were applied")
    assert (ws / "m.py").read_text() == SOURCE
    result = await call(
        registry, ctx, "edit_file", path="m.py", edits=[{"old": "(a, b):", "new": "(x, y):", "replace_all": True}]
    )
    assert result.content == "edited m.py: 3 replacements, 10 → 10 lines"
    assert (ws / "m.py").read_text().count("(x, y):") == 3


async def test_edit_keeps_crlf_and_mode(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    path = ws / "w.bat"
    path.write_bytes(b"echo one\r\necho two\r\n")
    os.chmod(path, 0o700)
    edits = [{"old": "echo one\necho two", "new": "echo 3"}]
    result = await call(registry, ctx, "edit_file", path="w.bat", edits=edits)
    assert not result.is_error, result.content
    assert path.read_bytes() == b"echo 3\r\n"
    assert path.stat().st_mode & 0o777 == 0o700


async def test_edit_errors(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "m.py").write_text(SOURCE)
    same = await call(registry, ctx, "edit_file", path="m.py", edits=[{"old": "add", "new": "add"}])
    assert same.is_error and "identical" in same.content
    missing = await call(registry, ctx, "edit_file", path="new.py", edits=[{"old": "a", "new": "b"}])
    assert missing.is_error and missing.content.startswith("not found: 'new.py'")
    nothing_alike = await call(registry, ctx, "edit_file", path="m.py", edits=[{"old": "ZZZZZZZZZZZZ", "new": "b"}])
    assert "Nothing in the file is similar." in nothing_alike.content


def test_closest_candidates_rank_and_do_not_overlap() -> None:
    text = "alpha = 1\nbeta = 2\ngamma = 3\nbeta = 20\n"
    found = closest_candidates(text, "beta = 2O")
    assert [(first, last) for first, last, _, _ in found][:2] == [(2, 2), (4, 4)]
    assert found[0][3] == "beta = 2"
    assert all(ratio >= 0.5 for _, _, ratio, _ in found)


@given(
    prefix=st.text(alphabet="ab\n", max_size=30),
    suffix=st.text(alphabet="ab\n", max_size=30),
    new=st.text(alphabet="abc\n", max_size=10),
)
def test_a_unique_old_is_replaced_exactly(prefix: str, suffix: str, new: str) -> None:
    old = "XYZ"  # cannot occur in prefix or suffix, so it is unique
    text = prefix + old + suffix
    edited, count = apply_edits(text, [Edit(old=old, new=new)], "f")
    assert edited == prefix + new + suffix and count == 1
