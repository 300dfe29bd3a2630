"""Reading a reference patch and turning each hunk into an ``edit_file`` edit whose old text is unique in the file."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.bench.patch import PatchFormatError, apply_hunks, parse_patch

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)


def udiff(before: list[str], after: list[str], path: str = "f.txt") -> str:
    return "".join(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}"))


def play(text: str, patch: str) -> str:
    """Apply the patch the way the oracle's executor does: one edit_file-style replacement per hunk."""
    (file,) = parse_patch(patch)
    for old, new in apply_hunks(text, file.hunks):
        assert text.count(old) == 1, "edit_file needs the old text exactly once"
        text = text.replace(old, new, 1)
    return text


LINES = st.lists(st.sampled_from(["a\n", "b\n", "pass\n", "return x\n", "\n"]), min_size=1, max_size=40)


@given(LINES, st.data())
def test_the_edits_turn_the_file_into_the_patched_one_even_with_repeated_lines(
    before: list[str], data: st.DataObject
) -> None:
    after = list(before)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(after)))
        if data.draw(st.booleans()) and i < len(after):
            del after[i]
        else:
            after.insert(i, data.draw(st.sampled_from(["NEW\n", "a\n", "changed\n"])))
    if after == before or not after:
        return
    assert play("".join(before), udiff(before, after)) == "".join(after)


def test_a_git_diff_with_a_created_file_and_no_final_newline(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    (tmp_path / "g.txt").write_text("x\ny")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "seed")
    (tmp_path / "g.txt").write_text("x\nz\n")
    (tmp_path / "n.txt").write_text("new\n")
    git("add", "-N", "n.txt")
    files = parse_patch(git("diff"))
    assert [(f.path, f.created) for f in files] == [("g.txt", False), ("n.txt", True)]
    assert apply_hunks("x\ny", files[0].hunks) == [("x\ny", "x\nz\n")]
    assert files[1].new_text == "new\n"


def test_a_removed_line_that_looks_like_a_header_stays_in_its_hunk() -> None:
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n keep\n--- not a header\n"
    (file,) = parse_patch(patch)
    assert file.hunks[0].old == ["keep\n", "-- not a header\n"]
    assert file.hunks[0].new == ["keep\n"]


@pytest.mark.parametrize(
    ("patch", "says"),
    [
        ("just words\n", "no file in the patch"),
        ("--- a/f\n+++ b/f\n@@ nonsense @@\n", "malformed"),
        ("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n", "ends early"),
        ("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\ndiff --git a/g b/g\n", "ends early"),
    ],
)
def test_a_patch_off_the_format_is_refused(patch: str, says: str) -> None:
    with pytest.raises(PatchFormatError, match=says):
        parse_patch(patch)


def test_a_hunk_that_does_not_match_the_file_is_refused() -> None:
    (file,) = parse_patch(udiff(["a\n", "b\n"], ["a\n", "c\n"]))
    with pytest.raises(PatchFormatError, match="does not match"):
        apply_hunks("something else\n", file.hunks)
