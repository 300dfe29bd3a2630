"""Pins on the shell reader and the unwrapping of wrappers: what a command line really runs, as the deny rules see it,
and whether the line is plain (what an allow rule may match)."""

from __future__ import annotations

import functools

import pytest

from sessions.permissions import Rules
from sessions.permissions.shell import scan
from sessions.permissions.unwrap import line_forms


@functools.cache
def _deny_rm() -> Rules:
    """Built on first use, not at import: a mutant that crashes the reader fails the tests, not their collection."""
    return Rules.parse(deny=["bash(rm:*)"])


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
    assert _deny_rm().for_command(line).decision == "deny"


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
    assert _deny_rm().for_command(line).decision == "deny"


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


def _read(line: str) -> tuple[list[list[str]], bool, str | None]:
    """Each command's word values (``~`` before a word not literal), whether the line is plain, its problem."""
    found = scan(line)
    words = [[w.value if w.literal else "~" + w.value for w in c.words] for c in found.commands]
    return words, found.plain, found.problem


@pytest.mark.parametrize(
    ("line", "words", "plain", "problem"),
    [
        # words: quoting, backslashes, continuation lines, comments
        ("a \\\nb", [["a", "b"]], True, None),
        ("a # b c\nd", [["a"], ["d"]], True, None),
        ("a #c", [["a"]], True, None),
        ("a#b c", [["a#b", "c"]], True, None),
        ("\\rm x\\ y\\", [["rm", "x y"]], True, None),
        ("c''url 'a b'\"c d\"", [["curl", "a bc d"]], True, None),
        ('echo "a\\$b\\`c\\"d\\\\e\\q"', [["echo", 'a$b`c"d\\e\\q']], True, None),
        ('echo "a\\\nb"', [["echo", "ab"]], True, None),
        ("a\tb\n\nc", [["a", "b"], ["c"]], True, None),
        ("a\x1fb", [["a\x1fb"]], True, None),
        # operators
        ("a&&b||c|d&e;f", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]], True, None),
        ("a|&b", [["a"], ["b"]], True, None),
        ("a;;b", [["a"], ["b"]], False, None),
        ("a;&b", [["a"], ["b"]], False, None),
        ("a;;&b", [["a"], ["b"]], False, None),
        # reserved words, only where a command starts
        ("echo if then", [["echo", "if", "then"]], True, None),
        ("if rm x; then ls; fi", [["rm", "x"], ["ls"]], False, None),
        ("x=1 if rm", [["x=1", "rm"]], False, None),
        ("function rm { ls; }", [["ls"]], False, None),
        ("! rm x", [["rm", "x"]], False, None),
        ("[[ -f x ]]", [["-f", "x", "]]"]], False, None),
        # subshells and substitutions: their commands are read
        ("(a)", [["a"]], False, None),
        ("(a) && (b)", [["a"], ["b"]], False, None),
        ("a)", [["a"]], False, "a ')' that closes nothing"),
        ("(a", [["a"]], False, "an unclosed '('"),
        ("$(a", [["~$(a"], ["a"]], False, "an unclosed $("),
        ("`a", [["~`a"], ["a"]], False, "an unclosed `"),
        ("echo `rm x` y", [["echo", "~`rm x`", "y"], ["rm", "x"]], False, None),
        ('echo "$(rm x)" "`rm y`"', [["echo", "~$(rm x)", "~`rm y`"], ["rm", "x"], ["rm", "y"]], False, None),
        ("echo $(a $(b) c)", [["echo", "~$(a $(b) c)"], ["a", "~$(b)", "c"], ["b"]], False, None),
        ("echo $(a) ) b", [["echo", "~$(a)"], ["a"]], False, "a ')' that closes nothing"),
        # expansions
        ("echo $HOME/x ${a} $1 $@ $$ $", [["echo", "~$HOME/x", "~${a}", "~$1", "~$@", "~$$", "~$"]], False, None),
        ("echo ${x:-`rm y`}", [["echo", "~${x:-`rm y`}"], ["rm", "y"]], False, None),
        ("echo ${x:-\\}} y", [["echo", "~${x:-\\}}", "y"]], False, None),
        ('echo "${x:-"}"}" z', [["echo", '~${x:-"}"}', "z"]], False, None),
        ("echo ${x:-${y:-$(rm z)}}", [["echo", "~${x:-${y:-$(rm z)}}"], ["rm", "z"]], False, None),
        ("echo ${x", [["echo", "~${x"]], False, "an unclosed ${"),
        ("echo $(( (1+2) * 3 )) y", [["echo", "~$(( (1+2) * 3 ))", "y"]], False, None),
        ("echo $((a); rm x)", [["echo", "~$((a); rm x)"], ["a"], ["rm", "x"]], False, None),
        ("echo $((1+\\)))", [["echo", "~$((1+\\)))"]], False, None),
        (
            'echo $((`rm y`+$(rm z)+"$(rm w)"))',
            [["echo", '~$((`rm y`+$(rm z)+"$(rm w)"))'], ["rm", "y"], ["rm", "z"], ["rm", "w"]],
            False,
            None,
        ),
        ("echo $((1", [["echo", "~$((1"]], False, "an unclosed $(("),
        ("echo $((1)", [["echo", "~$((1)"], ["1"]], False, "an unclosed $("),
        ('echo $"a b" c', [["echo", "~a b", "c"]], False, None),
        ("echo $'\\x414\\u00e9\\1011\\n\\t\\q\\'' z", [["echo", "~A4éA1\n\tq'", "z"]], False, None),
        ("echo $'\\e\\E\\r\\a\\b\\f\\v\\\\'", [["echo", "~\x1b\x1b\r\a\b\f\v\\"]], False, None),
        ("echo $'\\X41\\U41'", [["echo", "~X41U41"]], False, None),
        # malformed input keeps what was read
        ("echo 'ab", [["echo", "ab"]], False, "an unclosed '"),
        ('echo "ab', [["echo", "~ab"]], False, 'an unclosed "'),
        ("echo $'ab", [["echo", "~ab"]], False, "an unclosed $'"),
        ("echo a\x00b", [], False, "a NUL byte"),
        # assignments
        ("A=1 B+=2 C[1]=3 cmd 1A=2", [["A=1", "B+=2", "C[1]=3", "cmd", "1A=2"]], True, None),
        ("", [], True, None),
        ("  ;  ", [], True, None),
    ],
)
def test_the_reader_reads_words_commands_and_plainness(
    line: str, words: list[list[str]], plain: bool, problem: str | None
) -> None:
    assert _read(line) == (words, plain, problem)


def _redirects(line: str) -> list[tuple[str, str, bool, bool]]:
    return [(r.op, r.target.value, r.writes, r.reads) for c in scan(line).commands for r in c.redirects]


def test_every_redirection_operator_and_whether_it_writes_or_reads() -> None:
    line = "a >w1 >>w2 >|w3 &>w4 &>>w5 <>rw <r <<<s 2>&1 >&- >&w6 <&0 <&r2 3>w7 {fd}<r3 > 'w 8'"
    assert _redirects(line) == [
        (">", "w1", True, False),
        (">>", "w2", True, False),
        (">|", "w3", True, False),
        ("&>", "w4", True, False),
        ("&>>", "w5", True, False),
        ("<>", "rw", True, True),
        ("<", "r", False, True),
        ("<<<", "s", False, False),
        (">&", "1", False, False),
        (">&", "-", False, False),
        (">&", "w6", True, False),
        ("<&", "0", False, False),
        ("<&", "r2", False, True),
        (">", "w7", True, False),
        ("<", "r3", False, True),
        (">", "w 8", True, False),
    ]
    assert scan(line).plain
    assert [[w.value for w in c.words] for c in scan(line).commands] == [["a"]]


def test_a_redirection_alone_is_a_command_and_one_without_a_target_is_malformed() -> None:
    alone = scan("> f")
    assert [(c.words, [r.op for r in c.redirects]) for c in alone.commands] == [([], [">"])]
    assert alone.text(alone.commands[0]) == "> f"
    for line in ("echo >", "echo > ;", "echo >   \n", "echo 2> |", "echo < (x)", "echo >&"):
        found = scan(line)
        assert found.problem is not None and found.problem.startswith("a redirection '") and not found.plain, line
        assert [[w.value for w in c.words] for c in found.commands] == [["echo"]], line
    assert scan("echo >").problem == "a redirection '>' without a target"
    assert scan("echo 2>&").problem == "a redirection '>&' without a target"
    assert scan("echo > $(rm x)").commands[1].words[0].value == "rm"
    assert not scan("echo > $HOME").plain


def test_command_text_spans_its_words_and_redirections_with_blanks_squeezed() -> None:
    line = scan("a   b\t>  f ;  c  2>&1 | d")
    assert [line.text(c) for c in line.commands] == ["a b > f", "c 2>&1", "d"]
    assert [(c.start, c.end) for c in line.commands] == [(0, 10), (14, 21), (24, 25)]


@pytest.mark.parametrize(
    ("line", "words", "plain"),
    [
        ("cat <<E\n$(rm x)\nE\nls", [["cat"], ["rm", "x"], ["ls"]], False),
        ("cat <<'E'\n$(rm x)\nE\nls", [["cat"], ["ls"]], True),
        ('cat <<"E"\n$(rm x)\nE\nls', [["cat"], ["ls"]], True),
        ("cat <<\\E\n$(rm x)\nE\nls", [["cat"], ["ls"]], True),
        ("cat <<E\nplain\nE\nls", [["cat"], ["ls"]], True),
        ("cat <<-E\n\t$(rm x)\n\tE\nls", [["cat"], ["rm", "x"], ["ls"]], False),
        ("cat <<E\n\t$(rm x)\n\tE\nE\nls", [["cat"], ["rm", "x"], ["ls"]], False),  # <<: a tab is no delimiter
        ("cat <<-E\n$(rm x)\n\t\tE\n$(rm y)", [["cat"], ["rm", "x"], ["~$(rm y)"], ["rm", "y"]], False),
        ("cat <<E\n\\$(rm x) `rm y`\nE\nls", [["cat"], ["rm", "y"], ["ls"]], False),
        ("cat <<E\n$(rm x)", [["cat"], ["rm", "x"]], False),
        ("cat <<E\nE \nrm x\nE\nls", [["cat"], ["ls"]], True),  # "E " is body, not the delimiter
        ("cat <<E\nxE\nE\nrm y", [["cat"], ["rm", "y"]], True),
        ("cat <<A <<B\nx\nA\n$(rm y)\nB\necho z", [["cat"], ["rm", "y"], ["echo", "z"]], False),
        ("cat <<A <<'B'\n$(rm x)\nA\n$(rm y)\nB\necho z", [["cat"], ["rm", "x"], ["echo", "z"]], False),
        ("cat <<E; ls\n$(rm x)\nE\nrm y", [["cat"], ["ls"], ["rm", "x"], ["rm", "y"]], False),
        ("echo $(cat <<E\n$(rm x)\nE\n)", [["echo", "~$(cat <<E\n$(rm x)\nE\n)"], ["cat"], ["rm", "x"]], False),
        ("cat <<E\n$(rm x\nE\nls", [["cat"], ["rm", "x"]], False),
    ],
)
def test_here_documents_whose_body_expands_are_read_for_substitutions(
    line: str, words: list[list[str]], plain: bool
) -> None:
    found = scan(line)
    assert [[w.value if w.literal else "~" + w.value for w in c.words] for c in found.commands] == words
    assert found.plain == plain


def test_a_here_document_that_is_not_closed_or_not_opened() -> None:
    assert scan("cat <<E\n$(rm x\nE\nls").problem == "an unclosed $("
    assert [r.target.value for r in scan("cat <<'E O'\nx\nE O\n").commands[0].redirects] == ["E O"]
    assert scan("cat <<'E O'\nrm x\nE O\nls").commands[-1].words[0].value == "ls"
