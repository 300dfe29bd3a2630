"""Pins on the shell reader and the unwrapping of wrappers: what a command line really runs, as the deny rules see it,
and whether the line is plain (what an allow rule may match)."""

from __future__ import annotations

import pytest

from sessions.permissions import Rules
from sessions.permissions.unwrap import line_forms

DENY_RM = Rules.parse(deny=["bash(rm:*)"])


def _forms(line: str) -> list[list[str]]:
    return list(line_forms(line))


@pytest.mark.parametrize(
    "line",
    [
        "sudo -Eu root rm -rf x",
        "sudo -uroot rm -rf x",
        "sudo -E -u root rm -rf x",
        "env -S'rm -rf x'",
        "env -iS'rm -rf x'",
        "env -iS 'rm -rf x'",
        "env -i rm -rf x",
        "env --split-string='rm -rf x'",
        "xargs -0I {} rm -rf x",
        "timeout -ks9 5 rm -rf x",
    ],
)
def test_grouped_and_attached_short_options_of_wrappers_still_unwrap(line: str) -> None:
    assert ["rm", "-rf", "x"] in _forms(line)
    assert DENY_RM.for_command(line).decision == "deny"
