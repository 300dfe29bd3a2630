"""Pins on the shell reader and the unwrapping of wrappers: what a command line really runs, as the deny rules see it,
and whether the line is plain (what an allow rule may match)."""

from __future__ import annotations

import pytest

from sessions.permissions import Rules
from sessions.permissions.shell import scan
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


def test_a_process_substitution_inside_a_word_keeps_the_word_as_written() -> None:
    line = scan("cat a<(rm x)c 2>(b)")
    assert [w.value for w in line.commands[0].words] == ["cat", "a<(rm x)c", "2>(b)"]
    assert [w.literal for w in line.commands[0].words] == [True, False, False]
    assert [[w.value for w in c.words] for c in line.commands[1:]] == [["rm", "x"], ["b"]]
    assert not line.plain and line.problem is None


@pytest.mark.parametrize(
    "line",
    [
        "bash -c -e 'rm -rf x'",
        "bash -o pipefail -c 'rm -rf x'",
        "bash -eo pipefail -c 'rm -rf x'",
        "bash -O extglob -c 'rm -rf x'",
        "bash +o pipefail -c 'rm -rf x'",
        "bash --rcfile /dev/null -c 'rm -rf x'",
        "bash --init-file /dev/null -c 'rm -rf x'",
        "bash --norc -c 'rm -rf x'",
        "bash -c -- 'rm -rf x'",
        "bash -lc 'rm -rf x' name arg",
        "sh +x -c 'rm -rf x'",
        "busybox sh -c 'rm -rf x'",
    ],
)
def test_sh_c_finds_its_command_string_past_any_options(line: str) -> None:
    assert ["rm", "-rf", "x"] in _forms(line)
    assert DENY_RM.for_command(line).decision == "deny"


@pytest.mark.parametrize(
    ("line", "script"),
    [
        ("bash rm", None),  # a script file named rm
        ("bash -c", None),
        ("bash -x rm", None),
        ("bash -- -c rm", None),  # -- ends the options: -c is the script file
        ("sh - -c rm", None),
        ("bash --rcfile -c rm", None),  # -c is --rcfile's file
        ("bash -o -c rm", None),  # -c is -o's option name
        ("bash -c 'echo hi'", ["echo", "hi"]),
    ],
)
def test_what_sh_runs_when_there_is_no_c_string(line: str, script: list[str] | None) -> None:
    found = _forms(line)
    assert found[0][0] in ("bash", "sh")
    assert found[1:] == ([] if script is None else [script])


def test_closing_a_descriptor_reads_no_file() -> None:
    redirects = scan("cat <&- <&3 <&file 3<&- >&- 2>&1 >&out").commands[0].redirects
    assert [(r.op, r.target.value) for r in redirects] == [
        ("<&", "-"),
        ("<&", "3"),
        ("<&", "file"),
        ("<&", "-"),
        (">&", "-"),
        (">&", "1"),
        (">&", "out"),
    ]
    assert [r.reads for r in redirects] == [False, False, True, False, False, False, False]
    assert [r.writes for r in redirects] == [False, False, False, False, False, False, True]
    deny_read = Rules.parse(deny=["read(-)"], allow=["bash(cat:*)"])
    assert deny_read.for_command("cat <&-").decision == "allow"


def test_a_command_led_by_a_descriptor_redirection_is_named_from_it() -> None:
    line = scan("2>/dev/null git status; {fd}>f a")
    assert [line.text(c) for c in line.commands] == ["2>/dev/null git status", "{fd}>f a"]
    redirects = [[(r.op, r.target.value) for r in c.redirects] for c in line.commands]
    assert redirects == [[(">", "/dev/null")], [(">", "f")]]
