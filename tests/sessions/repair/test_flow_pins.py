"""Pins for prepare_calls, the stall repairs and the vetting of calls written as text: what runs, what is said."""

from __future__ import annotations

from sessions.repair.stall import repeated_name


def test_a_name_repeating_two_different_tools_is_no_single_tool() -> None:
    assert repeated_name("read_fileread_file", ["read_file", "write_file"]) == "read_file"
    assert repeated_name("read_filewrite_file", ["read_file", "write_file"]) is None
