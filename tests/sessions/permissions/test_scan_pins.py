"""Pins on the shell reader found by mutation testing (issue 32): how deep substitutions and expansions may nest, what a
word's value and literalness are, and the corners of comments, continuations, redirections and here-documents where
a misread would hide a command from the deny rules."""

from __future__ import annotations

import pytest

from sessions.permissions.shell import scan


def _read(line: str) -> tuple[list[list[str]], bool, str | None]:
    """Each command's word values (``~`` before a word not literal), whether the line is plain, its problem."""
    found = scan(line)
    words = [[w.value if w.literal else "~" + w.value for w in c.words] for c in found.commands]
    return words, found.plain, found.problem


def _substitutions(levels: int) -> str:
    return "echo " + "$(" * levels + "rm x" + ")" * levels


def _braces(levels: int) -> str:
    return "echo " + "${" * levels + "}" * levels


def test_substitutions_nest_31_deep_and_no_deeper() -> None:
    deep = scan(_substitutions(31))
    assert deep.problem is None
    assert [w.value for w in deep.commands[-1].words] == ["rm", "x"]
    assert scan(_substitutions(32)).problem == "substitutions nested too deeply"


def test_expansions_nest_63_deep_and_no_deeper() -> None:
    assert scan(_braces(63)).problem is None
    assert scan(_braces(64)).problem == "expansions nested too deeply"


def test_a_substitution_inside_an_expansion_counts_both_levels() -> None:
    inner = "$(" * 31 + "rm x" + ")" * 31
    found = scan("echo ${x:-" + inner + "}")
    assert found.problem is None
    assert [w.value for w in found.commands[-1].words] == ["rm", "x"]
    assert scan("echo ${x:-${y:-" + inner + "}}").problem == "substitutions nested too deeply"
    # an expansion read inside another gives back only its own level
    assert scan("echo ${x:-${y:-${a}" + inner + "}}").problem == "substitutions nested too deeply"


def test_the_nesting_depth_comes_back_down_after_each_substitution() -> None:
    many = "; ".join(["echo $(a) ${b} `c`"] * 80)
    assert scan(many).problem is None
    assert len(scan(many).commands) == 240
    # what was read before does not lower the limit either: the deep part still fails
    assert scan("echo $(a) ${b}; " + _substitutions(32)).problem == "substitutions nested too deeply"
    assert scan("echo $(a) ${b}; " + _braces(64)).problem == "expansions nested too deeply"


def test_a_word_with_any_expansion_is_not_literal_even_inside_double_quotes() -> None:
    words = scan('echo $\'a\' $"b" $c `d` "$e" "`f`" \'g\'').commands[0].words
    assert [w.literal for w in words] == [True, False, False, False, False, False, False, True]
    assert all(type(w.literal) is bool for w in words)


@pytest.mark.parametrize(
    ("line", "words", "plain", "problem"),
    [
        # continuation lines, between words and inside one
        ("a \\\n b", [["a", "b"]], True, None),
        ("ec\\\nho x", [["echo", "x"]], True, None),
        # a comment runs to the first newline only
        ("a # b\nrm x\nc", [["a"], ["rm", "x"], ["c"]], True, None),
        # nested subshells close in order
        ("((a) && (b))", [["a"], ["b"]], False, None),
        # names after $ and what is no name
        ("echo $$'a' $$\"b\"", [["echo", "~$$a", "~$$b"]], False, None),
        ("echo $$(rm x)", [["echo", "~$$"], ["rm", "x"]], False, None),
        ("echo $ x $%y", [["echo", "~$", "x", "~$%y"]], False, None),
        ("echo ${} b", [["echo", "~${}", "b"]], False, None),
        # arithmetic: letters and nested parentheses
        ("echo $((X+1)) y", [["echo", "~$((X+1))", "y"]], False, None),
        ("echo $(((1)))", [["echo", "~$(((1)))"]], False, None),
        # $'…' escapes in upper case hexadecimal
        ("echo $'\\x4A\\u00C9'", [["echo", "~JÉ"]], False, None),
        # a letter before ( is a word, not a process substitution
        ("echo X(a)", [["echo", "X"], ["a"]], False, None),
        # a digit before <( or >( starts a word, not a descriptor's redirection
        ("cat 2<(rm x) 3>(ls)", [["cat", "~2<(rm x)", "~3>(ls)"], ["rm", "x"], ["ls"]], False, None),
    ],
)
def test_reader_corners(line: str, words: list[list[str]], plain: bool, problem: str | None) -> None:
    assert _read(line) == (words, plain, problem)


def test_a_redirection_target_may_start_with_any_letter() -> None:
    found = scan("echo >X <Xin")
    assert found.problem is None
    assert [(r.op, r.target.value) for r in found.commands[0].redirects] == [(">", "X"), ("<", "Xin")]


def test_a_here_document_delimiter_with_a_letter_x_still_expands() -> None:
    assert _read("cat <<X\n$(rm x)\nX\nls") == ([["cat"], ["rm", "x"], ["ls"]], False, None)


def test_an_escaped_backslash_in_a_here_document_does_not_hide_the_substitution_after_it() -> None:
    assert _read("cat <<E\n\\\\$(rm x)\nE\n") == ([["cat"], ["rm", "x"]], False, None)


def test_a_dash_here_document_strips_only_tabs_before_its_delimiter() -> None:
    for line in ("cat <<-'E'\n  E\nrm x\nE\nls", "cat <<-'E'\n\tXE\nrm x\nE\nls"):
        assert _read(line) == ([["cat"], ["ls"]], True, None), line
    assert _read("cat <<-'E'\n\t\tE\nrm x") == ([["cat"], ["rm", "x"]], True, None)
