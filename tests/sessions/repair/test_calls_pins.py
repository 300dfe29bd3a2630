"""Pins for the tool-call shapes read from text (json_calls, scavenge) and for flattening: what is taken, what not."""

from __future__ import annotations

from sessions.repair.json_calls import call_shaped


def test_the_r1_variant_is_a_call_only_with_its_own_arguments_key() -> None:
    assert call_shaped({"tool_name": "read_file", "tool_args": {"path": "a"}}) == ("read_file", {"path": "a"}, False)
    assert call_shaped({"tool_name": "read_file", "arguments": {"path": "a"}}) is None
