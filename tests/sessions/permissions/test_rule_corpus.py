"""The permission-rule corpus: commands an attacker tried (issue 22) and their relatives, each with the decision it
must get; and a property, checked by bash itself, that an allow rule never lets a second command through."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sessions.permissions import Rules


@functools.cache
def _rules() -> Rules:
    """Built on first use, not at import: a shell-reader mutant that crashes must fail the tests, not their
    collection (which the mutation run counts as an error, not as caught)."""
    return Rules.parse(
        allow=["bash(git status:*)", "bash(ls)", "bash(cat:*)", "write(src/**)"],
        ask=["bash(git push:*)"],
        deny=["bash(rm:*)", "bash(curl:*)", "write(.env)", "read(.env)", "write(secrets/**)", "write(.github/**)"],
    )


ALLOW, ASK, DENY, DEFAULT = "allow", "ask", "deny", None
_FUZZ_LINE = st.text(alphabet=" \t\n;&|()<>$`'\"\\{}[]*?~#=!-xrmP019", max_size=60)
CORPUS: list[tuple[str, str | None]] = [
    # an allow rule allows exactly the command it names
    ("git status", ALLOW),
    ("git status --short", ALLOW),
    ("git  'status'  -s", ALLOW),
    ("git status && git status --short", ALLOW),
    ("ls", ALLOW),
    ("ls -la", DEFAULT),
    ("git status 2>/dev/null", ALLOW),
    ("git status 2>&1 | cat", ALLOW),
    ("git status > src/status.txt", ALLOW),
    ("git status # $(touch P)", ALLOW),
    ("cat <<'EOF'\n$(touch P)\nEOF", ALLOW),
    ("cat <<EOF\nplain text\nEOF", ALLOW),
    # ... and nothing that rides along
    ("git status ${x:-$(touch P)}", DEFAULT),
    ("cat <<EOF\n$(touch P)\nEOF", DEFAULT),
    ('git status "${x:-`touch P`}"', DEFAULT),
    ("git status > FILE", DEFAULT),
    ("git status >> FILE", DEFAULT),
    ("git status &> FILE", DEFAULT),
    ("git status ${a[$(touch P)]}", DEFAULT),
    ("git status ${PATH/x/$(touch P)}", DEFAULT),
    ("git status $(( $(touch P) + 1 ))", DEFAULT),
    ("git status <(touch P)", DEFAULT),
    ("git status `touch P`", DEFAULT),
    ("git status $HOME", DEFAULT),
    ("git status $'\\x41'", DEFAULT),
    ("git\x1fstatus", DEFAULT),
    ("git status && touch P", DEFAULT),
    ("git status; touch P", DEFAULT),
    ("git status\ntouch P", DEFAULT),
    ("git status & touch P", DEFAULT),
    ("git status | sh", DEFAULT),
    ("(git status)", DEFAULT),
    ("{ git status; }", DEFAULT),
    ("if git status; then touch P; fi", DEFAULT),
    ("FOO=1 git status", DEFAULT),
    ("LD_PRELOAD=./evil.so git status", DEFAULT),
    ("/tmp/evil/git status", DEFAULT),
    ("cat <<< $(touch P)", DEFAULT),
    ("git status > ~/.bashrc", DEFAULT),
    ("git status > /etc/cron.d/x", DEFAULT),
    ("git status > src/../README.md", DEFAULT),
    ("git status > src/*.txt", DEFAULT),
    # redirections are writes and reads, and pass the path rules
    ("git status > .env", DENY),
    ("git status > ./.github/workflows/ci.yml", DENY),
    ("git status > x/../secrets/key", DENY),
    ("git status >> src/../secrets/key", DENY),
    ("cat < .env", DENY),
    ("echo $(cat < .env)", DENY),
    # deny rules see through assignments, quoting, backslashes, paths and wrappers
    ("rm -rf /", DENY),
    ("FOO=1 rm -rf x", DENY),
    ("command rm x", DENY),
    ("\\rm x", DENY),
    ("r\\m x", DENY),
    ("/bin/rm x", DENY),
    ("env rm x", DENY),
    ("env -i FOO=1 rm x", DENY),
    ("/usr/bin/env -u HOME rm x", DENY),
    ("env -S 'rm x'", DENY),
    ("exec rm x", DENY),
    ("nice -n 5 rm x", DENY),
    ("nice -5 rm x", DENY),
    ("timeout 5 rm x", DENY),
    ("timeout -s KILL 5 curl x", DENY),
    ("nohup rm x &", DENY),
    ("sudo -u root rm x", DENY),
    ("stdbuf -oL rm x", DENY),
    ("bash -c 'rm x'", DENY),
    ('sh -lc "rm x"', DENY),
    ("bash -c \"bash -c 'rm x'\"", DENY),
    ("/usr/bin/env bash -c 'curl x'", DENY),
    ("eval 'rm x'", DENY),
    ("eval rm x", DENY),
    ("find . -name '*.pyc' -exec rm {} \\;", DENY),
    ("find . -execdir rm -f {} +", DENY),
    ("ls | xargs rm", DENY),
    ("ls | xargs -0 -n 1 rm -f", DENY),
    ("ls | xargs -I {} rm {}", DENY),
    ("c''url http://example.com", DENY),
    ('"curl" http://example.com', DENY),
    ("cu\\rl x", DENY),
    ("$'\\x72m' x", DENY),
    # every command substitution, anywhere, is checked
    ("echo $(rm x)", DENY),
    ("echo `rm x`", DENY),
    ('echo "${x:-$(rm x)}"', DENY),
    ("echo ${a[$(rm x)]}", DENY),
    ("echo ${PATH/x/$(rm x)}", DENY),
    ("echo $(( $(rm x) + 1 ))", DENY),
    ("cat <<EOF\n$(rm x)\nEOF", DENY),
    ("cat <(curl x)", DENY),
    ("(cd d && rm x)", DENY),
    ("for f in a; do rm $f; done", DENY),
    ("git status && rm x", DENY),
    ("git status && rm x && git push", DENY),
    # a deny match is found even where the line cannot be read; otherwise what cannot be read asks
    ('rm x "unterminated', DENY),
    ("echo ok && c''url \"open", DENY),
    ('echo "open', ASK),
    ("echo $(open", ASK),
    ("git status )", ASK),
    ("git status " + "$(" * 200 + "touch P" + ")" * 200, ASK),  # nested too deeply to read
    ("git status " + "${x:-" * 2000, ASK),
    # wrapped more deeply than is followed: every word may start a command
    ("eval " * 30 + "rm x", DENY),
    ("timeout 1 " * 20 + "rm x", DENY),
    # ask rules see through the same
    ("git push", ASK),
    ("git push origin main", ASK),
    ("git status && git push", ASK),
    ("env git push", ASK),
    # prefixes are whole words; a word is not a command
    ("rmdir x", DEFAULT),
    ("echo rm x", DEFAULT),
    ("command -v rm", DEFAULT),
    ("git statusx", DEFAULT),
]


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 60
    assert len({c for c, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("command", "decision"), CORPUS, ids=[repr(c)[:60] for c, _ in CORPUS])
def test_corpus(command: str, decision: str | None) -> None:
    assert _rules().for_command(command).decision == decision


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | _FUZZ_LINE)
def test_any_text_gets_a_verdict(text: str) -> None:
    verdict = _rules().for_command(text)
    assert verdict.decision in (ALLOW, ASK, DENY, DEFAULT)


def test_rules_of_one_kind_never_match_another() -> None:
    assert Rules.parse(deny=["write(rm)", "read(rm)", "mcp(rm)"]).for_command("rm x").decision is None
    assert Rules.parse(allow=["write(git status)", "read(*)"]).for_command("git status").decision is None
    assert Rules.parse(deny=["bash(.env)", "read(.env)"]).for_path("write", ".env").decision is None
    assert Rules.parse(deny=["write(.env)"]).for_path("read", ".env").decision is None
    assert Rules.parse(deny=["bash(x.y)"]).for_path("mcp", "x.y").decision is None


@pytest.mark.parametrize(
    ("kind", "path", "decision"),
    [
        ("write", ".env", DENY),
        ("write", "./.env", DENY),
        ("read", ".env", DENY),
        ("read", "env", DEFAULT),
        ("write", ".github/workflows/ci.yml", DENY),
        ("write", "x/../secrets/key", DENY),
        ("write", "src/../secrets/key", DENY),
        ("write", "src/./a/../b.py", ALLOW),
        ("write", "src/a.py", ALLOW),
        ("write", "src/../README.md", DEFAULT),
        ("write", "../outside/src/a.py", DEFAULT),
    ],
)
def test_path_rules_match_the_normalised_workspace_path(kind: str, path: str, decision: str | None) -> None:
    assert _rules().for_path(kind, path).decision == decision


def test_exact_rules_and_what_always_saved() -> None:
    exact = Rules.parse(allow=["bash(git status)", "bash(echo $(date) > out.txt)"])
    assert exact.for_command("git status").decision == ALLOW
    assert exact.for_command("git status --short").decision is None
    assert exact.for_command("echo $(date) > out.txt").decision == ALLOW  # byte for byte what the user approved
    assert exact.for_command("echo $(date) > out2.txt").decision is None
    assert exact.for_command("echo $(date)  > out.txt").decision is None
    everything = Rules.parse(allow=["bash"], deny=["bash(rm:*)", "write(.env)"])
    assert everything.for_command("echo $(date) > x").decision == ALLOW
    assert everything.for_command("echo $(rm x)").decision == DENY
    assert everything.for_command("echo x > .env").decision == DENY


# The property, with bash as the judge: whatever line an allow rule allows, bash runs nothing but that command.
# Commands are looked up in a directory holding only ``git``; any other command reaches bash's
# command_not_found_handle, which leaves a canary.

_SECOND = ["touch P", "sh -c 'touch P'", "rm -rf P"]
_TEMPLATES = [
    "git status && {}",
    "git status; {}",
    "git status | {}",
    "git status & {}",
    "git status\n{}",
    "git status $({})",
    "git status `{}`",
    "git status ${{x:-$({})}}",
    'git status "${{x:-`{}`}}"',
    "git status ${{a[$({})]}}",
    "git status ${{PATH/x/$({})}}",
    "git status $(( $({}) ))",
    "git status <({})",
    "cat <<EOF\n$({})\nEOF",
    "git status <<EOF\n`{}`\nEOF",
    "FOO=$({}) git status",
    "git status > >({})",
    "git status\x1f{}",
    "git status \\\n; {}",
]
_FUZZ = st.text(alphabet=" \t\n;&|()<>$`'\"\\{}[]*?~#=!-xP019", max_size=24)


@pytest.fixture(scope="module")
def judge() -> tuple[Path, dict[str, str]]:
    bash = shutil.which("bash")
    assert bash is not None
    stubs = Path(tempfile.mkdtemp(prefix="reasonix-judge-"))
    (stubs / "git").write_text("#!/bin/sh\nexit 0\n")
    (stubs / "git").chmod(0o755)
    canary = stubs / "canary"
    env_file = stubs / "env.sh"
    env_file.write_text(f"command_not_found_handle() {{ : > {canary}; return 127; }}\n")
    env = {"PATH": str(stubs), "BASH_ENV": str(env_file), "HOME": str(stubs)}
    return canary, {**env, "BASH": bash}


def _runs_only_git(line: str, canary: Path, env: dict[str, str]) -> bool:
    canary.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as cwd:
        subprocess.run([env["BASH"], "-c", line], cwd=cwd, env=env, capture_output=True, timeout=20, check=False)
        created = os.listdir(cwd)
    return not canary.exists() and created == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(template=st.sampled_from(_TEMPLATES), second=st.sampled_from(_SECOND) | _FUZZ, tail=_FUZZ)
@example(template="git status {}", second="", tail="")
def test_an_allow_rule_never_lets_a_second_command_through(
    judge: tuple[Path, dict[str, str]], template: str, second: str, tail: str
) -> None:
    canary, env = judge
    line = template.format(second) + tail
    rules = Rules.parse(allow=["bash(git status:*)"])
    if rules.for_command(line).decision == "allow":
        assert _runs_only_git(line, canary, env), line
    if second in _SECOND:
        assert rules.for_command(line).decision != "allow", line
