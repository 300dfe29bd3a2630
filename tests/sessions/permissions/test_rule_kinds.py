"""Rules of one kind never decide for another, what cannot be read is still denied, and MCP and web rules match as
documented: the behaviour mutation testing (bench/mutation_score.py) found unpinned in sessions/permissions/rules.py."""

from __future__ import annotations

import pytest

from sessions.permissions import Rules
from sessions.permissions.rules import Rule, RuleError, canonical, lexical

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)


@pytest.mark.parametrize(
    "command",
    ['rm -rf "open', "rm -rf 'open", 'ls && rm -rf "x', 'ls; rm -rf "x', 'echo $(rm -rf /) "open'],
    ids=["double-quote", "single-quote", "and", "semicolon", "substitution"],  # plain ids: mutmut runs tests by id
)
def test_a_line_that_cannot_be_read_but_matches_a_deny_rule_is_denied(command: str) -> None:
    rules = Rules.parse(allow=["bash"], ask=["bash(rm:*)"], deny=["bash(rm:*)"])
    assert rules.for_command(command).decision == "deny"
    assert rules.for_command(command).rule == "bash(rm:*)"


def test_a_line_that_cannot_be_read_asks_naming_the_ask_rule_or_unparseable() -> None:
    rules = Rules.parse(allow=["bash", 'bash(curl x "open)'], ask=["bash(curl:*)"])
    assert rules.for_command('curl x "open').decision == "ask"
    assert rules.for_command('curl x "open').rule == "bash(curl:*)"
    verdict = rules.for_command('echo "open')
    assert (verdict.decision, verdict.rule) == ("ask", "unparseable")


def test_path_rules_never_decide_a_command() -> None:
    every = Rules.parse(allow=["write(**)", "read", "mcp", "web"], deny=["write(rm)", "read(ls)"], ask=["mcp(ls)"])
    for command in ("rm -rf src", "ls", "git status"):
        assert every.for_command(command).decision is None
    named = Rules.parse(allow=["write(git status)", "read(git:*)"])
    assert named.for_command("git status").decision is None
    assert named.for_command("git log").decision is None
    assert Rules.parse(deny=["write(git status)"]).for_command("git status").decision is None
    assert Rules.parse(ask=["read(git status)"]).for_command("git status").decision is None


def test_command_rules_never_decide_a_path_or_a_tool() -> None:
    rules = Rules.parse(allow=["bash", "bash(src/a.py)"], deny=["bash(secrets/key)"], ask=["bash(files.read)"])
    assert rules.for_path("read", "secrets/key").decision is None
    assert rules.for_path("write", "src/a.py").decision is None
    assert rules.for_path("mcp", "files.read").decision is None
    assert rules.for_path("web", "src/a.py").decision is None


def test_a_rule_of_one_path_kind_never_decides_another() -> None:
    rules = Rules.parse(allow=["read(docs/**)", "mcp(docs)"], deny=["write(secrets/**)"], ask=["web(docs)"])
    assert rules.for_path("read", "secrets/key").decision is None
    assert rules.for_path("write", "docs/a.md").decision is None
    assert rules.for_path("mcp", "docs.read").decision == "allow"
    assert rules.for_path("web", "docs").decision == "ask"
    assert rules.for_path("read", "docs").decision is None  # a glob of files under docs/, not docs itself
    assert rules.for_path("write", "secrets/key").decision == "deny"


def test_mcp_rules_name_a_server_its_tools_or_a_pattern() -> None:
    rules = Rules.parse(
        allow=["mcp(files)", "mcp(db.*)"], ask=["mcp(db.drop*)"], deny=["mcp(files.delete)", "mcp(git.push*)"]
    )
    expected = {
        "files.read": ("allow", "mcp(files)"),
        "files.delete": ("deny", "mcp(files.delete)"),
        "filesx.read": (None, None),
        "files": ("allow", "mcp(files)"),
        "git.push_force": ("deny", "mcp(git.push*)"),
        "git.pull": (None, None),
        "db.query": ("allow", "mcp(db.*)"),
        "db.drop_table": ("ask", "mcp(db.drop*)"),
        "db": (None, None),
        "other.tool": (None, None),
    }
    assert {tool: (v.decision, v.rule) for tool in expected for v in [rules.for_path("mcp", tool)]} == expected
    assert Rules.parse(deny=["mcp"]).for_path("mcp", "any.tool").decision == "deny"
    assert Rules.parse(deny=["mcp(*)"]).for_path("mcp", "any.tool").decision == "deny"


def test_web_rules_name_a_host_its_subdomains_or_a_glob() -> None:
    rules = Rules.parse(allow=["web(Python.ORG)"], deny=["web(*.evil.com)"])
    assert rules.for_path("web", "python.org").decision == "allow"
    assert rules.for_path("web", "docs.python.org").decision == "allow"
    assert rules.for_path("web", "notpython.org").decision is None
    assert rules.for_path("web", "python.org.evil.com").decision == "deny"
    assert rules.for_path("web", "evil.com").decision is None


def test_deny_beats_ask_beats_allow_for_paths_and_tools() -> None:
    rules = Rules.parse(allow=["write(src/**)", "mcp(x)"], ask=["write(src/**)", "mcp(x)"], deny=["write(src/k/**)"])
    assert (rules.for_path("write", "src/k/a").decision, rules.for_path("write", "src/k/a").rule) == (
        "deny",
        "write(src/k/**)",
    )
    assert rules.for_path("write", "src/a").decision == "ask"
    assert rules.for_path("mcp", "x.t").decision == "ask"
    assert rules.for_path("write", "../src/a").decision is None  # outside the workspace: no rule speaks for it


def test_a_rule_that_does_not_parse_names_every_form() -> None:
    with pytest.raises(RuleError) as raised:
        Rule.parse("shell(ls)")
    assert str(raised.value) == (
        "'shell(ls)' is not a rule; expected bash(COMMAND), bash(PREFIX:*), write(GLOB), read(GLOB), "
        "mcp(SERVER.TOOL) or web(HOST)"
    )


def test_rule_text_is_kept_stripped_and_an_empty_or_star_pattern_means_every_call() -> None:
    assert Rule.parse(" bash ( ls ) ").text == "bash ( ls )"
    assert Rule.parse(" bash ( ls ) ").words == ("ls",)
    for text in ("read", "read()", "read( )", "read(*)", "read(**)", " read "):
        rule = Rule.parse(text)
        assert (rule.kind, rule.pattern, rule.text) == ("read", None, text.strip())
    prefix = Rule.parse("bash(npm test :*)")
    assert (prefix.pattern, prefix.prefix, prefix.words) == ("npm test", True, ("npm", "test"))


def test_canonical_collapses_blanks_only_where_no_quote_could_hold_them() -> None:
    assert canonical("  git   status \t\n") == "git status"
    assert canonical("echo 'a  b'") == "echo 'a  b'"
    assert canonical('echo "a  b"') == 'echo "a  b"'
    assert canonical("echo a\\  b") == "echo a\\  b"
    assert canonical("echo $x  y") == "echo $x  y"


def test_lexical_paths_stay_in_the_workspace() -> None:
    assert lexical("x/../secrets/key") == ("secrets/key",)
    assert lexical("./a//b") == ("a/b",)
    for outside in ("", "/etc/passwd", "~/x", "..", "../a", "a/../../b"):
        assert lexical(outside) is None
    assert lexical("..a") == ("..a",)


def test_a_rule_naming_several_commands_is_compared_as_text_only() -> None:
    rules = Rules.parse(allow=["bash(git status && curl x)", "bash(echo a > out)"])
    assert rules.for_command("git status").decision is None
    assert rules.for_command("git status && curl x").decision == "allow"
    assert rules.for_command("echo a").decision is None
    assert Rule.parse("bash(git status; ls)").words is None
    assert Rule.parse("bash(echo a > out)").words is None
    assert Rule.parse("bash(echo $HOME)").words is None
    assert Rule.parse("bash(git status)").words == ("git", "status")


def tool_names_are_not_paths(path: str) -> tuple[str, ...] | None:
    """A PathCandidates that places nothing in the workspace: MCP tools and hosts must never be asked about."""
    return None


def test_tools_and_hosts_are_matched_as_named_not_placed_in_the_workspace() -> None:
    rules = Rules.parse(allow=["mcp(files)", "web(python.org)"], deny=["read(**)"])
    assert rules.for_path("mcp", "files.read", tool_names_are_not_paths).decision == "allow"
    assert rules.for_path("web", "python.org", tool_names_are_not_paths).decision == "allow"
    assert rules.for_path("read", "a.txt", tool_names_are_not_paths).decision is None


def test_a_redirection_is_placed_by_the_callers_paths() -> None:
    def through_a_link(path: str) -> tuple[str, ...] | None:
        return (path, "secrets/key") if path == "link" else (path,)

    rules = Rules.parse(allow=["bash(cat:*)"], deny=["read(secrets/**)"], ask=["write(secrets/**)"])
    verdict = rules.for_command("cat < link", through_a_link)
    assert (verdict.decision, verdict.rule) == ("deny", "read(secrets/**)")
    assert rules.for_command("cat < link").decision == "allow"
    assert rules.for_command("cat a > link", through_a_link).decision == "ask"


def test_an_allow_names_the_rules_that_allowed_it_once_each() -> None:
    rules = Rules.parse(allow=["bash(git status)", "bash(ls:*)", "bash(git status)"])
    verdict = rules.for_command("git status && ls -la && git status")
    assert (verdict.decision, verdict.rule) == ("allow", "bash(git status), bash(ls:*)")
    assert Rules.parse(allow=["bash"]).for_command("anything").rule == "bash"
    assert Rules.parse(allow=["bash(a  $x)"]).for_command("a  $x").rule == "bash(a  $x)"  # the exact text saved


def test_an_exact_deny_rule_covers_its_command_in_any_form_and_no_other() -> None:
    rules = Rules.parse(deny=["bash(rm x)"])
    assert rules.for_command("rm y").decision is None
    assert rules.for_command("rm x y").decision is None
    assert rules.for_command("env rm x").decision == "deny"
    assert rules.for_command("/bin/rm x").decision == "deny"


def test_blanks_bash_reads_as_part_of_a_word_are_not_stripped() -> None:
    assert Rules.parse(allow=["bash(git status)"]).for_command("git status\r").decision is None
    assert canonical("echo  X") == "echo X"


def test_a_redirection_that_only_reads_is_not_a_write_and_nothing_run_allows_nothing() -> None:
    assert Rules.parse(deny=["write(secrets/**)"]).for_command("cat < secrets/key").decision is None
    assert Rules.parse(allow=["write(**)"]).for_command("> out").decision is None
