"""Pins on the unwrapping of wrappers found by mutation testing (issue 32): how deep wrappers are followed before every
word counts as a possible command, and the options of ``command``, ``env``, ``xargs``, ``find`` and ``chroot``."""

from __future__ import annotations

import pytest

from sessions.permissions import Rules
from sessions.permissions.unwrap import forms, line_forms


def _forms(line: str) -> list[list[str]]:
    return list(line_forms(line))


def test_wrappers_are_followed_eight_deep_then_every_word_may_start_a_command() -> None:
    eight = list(forms(["nohup"] * 8 + ["rm", "x"]))
    assert eight[-1] == ["rm", "x"] and ["x"] not in eight
    assert _forms("nohup " * 8 + "rm x") == eight
    nine = list(forms(["nohup"] * 9 + ["/bin/rm", "-rf", "x/"]))
    assert nine[9:] == [["rm", "-rf", "x/"], ["-rf", "x/"], ["x/"]]
    assert _forms("nohup " * 9 + "/bin/rm -rf x/") == nine


@pytest.mark.parametrize("runner", ["eval rm x", "sh -c 'rm x'", "find . -exec rm x \\;"])
def test_a_command_line_or_find_exec_counts_as_one_more_level_of_wrapping(runner: str) -> None:
    assert ["x"] not in _forms("nohup " * 7 + runner)
    found = _forms("nohup " * 8 + runner)
    assert ["rm", "x"] in found and ["x"] in found


@pytest.mark.parametrize("line", ["command -v rm", "command -V rm", "command -pv rm"])
def test_command_v_only_looks_a_name_up(line: str) -> None:
    assert _forms(line) == [line.split()]


def test_command_runs_what_follows_its_other_options() -> None:
    assert _forms("command vi x") == [["command", "vi", "x"], ["vi", "x"]]
    assert ["rm", "-rf", "x"] in _forms("command -p rm -rf x")
    assert Rules.parse(deny=["bash(rm:*)"]).for_command("command -p rm -rf x").decision == "deny"


def test_command_with_v_after_another_option_is_read_as_running_its_command() -> None:
    """Only a first option with a ``v`` is known to look the name up; ``command -p -v rm`` only looks it up too, but
    reading it as running ``rm`` errs on the safe side: a deny rule for ``rm`` refuses it."""
    assert ["rm", "-rf", "x"] in _forms("command -p -v rm -rf x")
    assert Rules.parse(deny=["bash(rm:*)"]).for_command("command -p -v rm -rf x").decision == "deny"


def test_xargs_without_a_command_runs_echo_and_other_wrappers_run_nothing() -> None:
    assert _forms("xargs") == [["xargs"], ["echo"]]
    assert _forms("xargs -0") == [["xargs", "-0"], ["echo"]]
    assert _forms("nohup") == [["nohup"]]
    assert _forms("nice -n 5") == [["nice", "-n", "5"]]


def test_find_exec_runs_the_words_up_to_its_terminator_only() -> None:
    assert _forms("find . -exec rm {} \\; -print") == [["find", ".", "-exec", "rm", "{}", ";", "-print"], ["rm", "{}"]]
    assert _forms("find . -exec rm {} + -delete")[1:] == [["rm", "{}"]]
    assert _forms("find . -exec ls \\; -execdir rm x \\;")[1:] == [["ls"], ["rm", "x"]]


def test_find_exec_without_a_terminator_runs_every_word_after_it() -> None:
    """bash passes an unterminated ``-exec`` to find, which refuses it; read as running its words, a deny rule errs
    safe."""
    assert _forms("find . -exec rm -rf {}")[1:] == [["rm", "-rf", "{}"]]
    assert Rules.parse(deny=["bash(rm:*)"]).for_command("find . -exec rm -rf {}").decision == "deny"


def test_a_shell_given_a_script_file_named_sh_runs_no_command_string() -> None:
    assert _forms("bash sh -c 'rm x'") == [["bash", "sh", "-c", "rm x"]]


def test_double_dash_ends_a_wrappers_options() -> None:
    assert _forms("nice -- -x y") == [["nice", "--", "-x", "y"], ["-x", "y"]]
    assert ["rm", "-rf", "x"] in _forms("nice -- rm -rf x")


def test_a_lone_dash_is_a_command_name_except_for_env_where_it_clears_the_environment() -> None:
    assert _forms("nohup - x") == [["nohup", "-", "x"], ["-", "x"]]
    assert ["rm", "-rf", "x"] in _forms("env - rm -rf x")
    assert ["rm", "-rf", "x"] in _forms("env - A=1 rm -rf x")
    assert _forms("env - A=1") == [["env", "-", "A=1"]]


def test_env_split_string_keeps_an_equals_sign_in_its_argument() -> None:
    assert ["rm", "-rf", "x=1"] in _forms("env --split-string='rm -rf x=1'")


@pytest.mark.parametrize(
    "line",
    [
        "chroot /srv rm -rf x",
        "chroot --userspec=u:g /srv rm -rf x",
        "chroot --userspec u:g /srv rm -rf x",
        "chroot --groups g --userspec u /srv rm -rf x",
        "chroot --skip-chdir /srv rm -rf x",
    ],
)
def test_chroot_runs_the_command_after_its_options_and_new_root(line: str) -> None:
    assert ["rm", "-rf", "x"] in _forms(line)
    assert Rules.parse(deny=["bash(rm:*)"]).for_command(line).decision == "deny"
