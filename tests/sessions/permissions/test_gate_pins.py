"""The permission gate's decisions and words, as mutation testing (bench/mutation_score.py) found them unpinned: which
calls rules govern, what each approval mode runs, asks or refuses, the rule an "always" saves, and the text the model
reads when a call is refused (a refusal is the tool result it gets instead of the call's output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from sessions.permissions import Answer, PermissionGate, Question, Rules
from sessions.permissions.gate import ApprovalMode, workspace_paths
from sessions.sandbox import NoSandbox, SandboxPolicy
from sessions.tools import ToolContext, ToolResult, default_registry
from sessions.tools.base import Tool
from sessions.tools.web.fetch import WebFetchTool
from tests.support.bwrap import require_bwrap, sandbox

REGISTRY = default_registry(use_ripgrep=False)


class ServerArgs(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ServerTool(Tool[ServerArgs]):
    """An MCP server's tool as the gate sees it: the rules' subject ``server.tool``, the server's read-only claim."""

    name = "docs__search"
    description = "search the docs"
    args_model = ServerArgs
    read_only = False
    parallel_safe = False
    rule_subject: ClassVar[tuple[str, str]] = ("mcp", "docs.search")

    async def run(self, args: ServerArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="found")


class HintedServerTool(ServerTool):
    read_only = True


class PlainTool(Tool[ServerArgs]):
    """A tool of none of the kinds rules govern (a note to the user, say)."""

    name = "note"
    description = "leave a note"
    args_model = ServerArgs
    read_only = False
    parallel_safe = False

    async def run(self, args: ServerArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="noted")


class Asked:
    """The terminal: records each question and gives the answers in turn."""

    def __init__(self, *answers: Answer) -> None:
        self.questions: list[Question] = []
        self.answers = list(answers)

    async def __call__(self, question: Question) -> Answer:
        self.questions.append(question)
        return self.answers.pop(0)


async def check(gate: PermissionGate, ctx: ToolContext, name: str, **args: Any) -> str | None:
    tool: Tool[Any] = WebFetchTool() if name == "web_fetch" else REGISTRY.get(name)  # type: ignore[assignment]
    return await gate.check(tool, tool.args_model(**args), ctx)


async def check_mcp(gate: PermissionGate, ctx: ToolContext, tool: ServerTool, **args: Any) -> str | None:
    return await gate.check(tool, ServerArgs(**args), ctx)


def context(root: Path, gate: PermissionGate, box: Any = None) -> ToolContext:
    return ToolContext(root=root, sandbox=box or NoSandbox(), gate=gate)


def no_terminal(subject: str, rule: str, tool: str = "bash") -> str:
    return (
        f"refused: {tool} `{subject}` needs approval and there is no terminal to ask; the user can allow it by "
        f"adding {rule!r} to [permissions] allow in reasonix.toml"
    )


def test_a_path_is_matched_as_written_and_where_its_symlink_leads(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("x")
    (tmp_path / "link").symlink_to("real")
    paths = workspace_paths(tmp_path)
    assert paths("link/a.txt") == ("link/a.txt", "real/a.txt")
    assert paths("./real/../real/a.txt") == ("real/a.txt",)  # one candidate when both are the same
    assert paths("../outside") is None  # out of the workspace
    assert paths("") is None  # not a path at all


async def test_only_the_calls_rules_govern_are_checked(tmp_path: Path) -> None:
    deny_all = Rules.parse(deny=["read(**)", "write(**)"])
    gate = PermissionGate(deny_all, mode="read-only")
    ctx = context(tmp_path, gate)
    # A tool no rule kind names (not a command, a file, a host or a server's tool) runs, even read-only.
    assert await gate.check(PlainTool(), ServerArgs(path="a.txt", command="rm -rf ."), ctx) is None
    assert gate.deny_refusal(PlainTool(), ServerArgs(path="a.txt"), ctx) is None
    # grep, glob and list_dir read their path (the workspace when none is given).
    assert (await check(gate, ctx, "glob", pattern="*.py")) == (
        "refused by the rule 'read(**)' in [permissions] deny; do not retry it, find another way"
    )
    assert (await check(gate, ctx, "grep", pattern="x", path="src")) == (
        "refused by the rule 'read(**)' in [permissions] deny; do not retry it, find another way"
    )
    assert (await check(gate, ctx, "edit_file", path="a.py", edits=[{"old": "a", "new": "b"}])) == (
        "refused by the rule 'write(**)' in [permissions] deny; do not retry it, find another way"
    )
    # A path outside the workspace is the file tool's to refuse, whatever the rules say.
    assert await check(gate, ctx, "write_file", path="../elsewhere.txt", content="x") is None
    assert await check(gate, ctx, "read_file", path="/etc/passwd") is None
    read = REGISTRY.get("read_file")
    assert read is not None
    assert gate.deny_refusal(read, read.args_model(path="../x"), ctx) is None


async def test_a_deny_rule_refuses_in_every_mode_and_after_a_hook_allowed(tmp_path: Path) -> None:
    rules = Rules.parse(allow=["bash", "write(**)"], deny=["bash(git push:*)", "write(.env)", "web(evil.example)"])
    modes: tuple[ApprovalMode, ...] = ("auto", "ask", "read-only")
    for mode in modes:
        gate = PermissionGate(rules, mode=mode, asker=Asked())
        ctx = context(tmp_path, gate)
        assert await check(gate, ctx, "bash", command="git push origin main") == (
            "refused by the rule 'bash(git push:*)' in [permissions] deny; do not retry it, find another way"
        )
        assert (await check(gate, ctx, "web_fetch", url="https://EVIL.example/x")) == (
            "refused by the rule 'web(evil.example)' in [permissions] deny; do not retry it, find another way"
        )
    gate = PermissionGate(rules)
    ctx = context(tmp_path, gate)
    bash = REGISTRY.get("bash")
    write = REGISTRY.get("write_file")
    assert bash is not None and write is not None
    assert gate.deny_refusal(bash, bash.args_model(command="git push"), ctx) == (
        "refused by the rule 'bash(git push:*)' in [permissions] deny; do not retry it, find another way"
    )
    assert gate.deny_refusal(bash, bash.args_model(command="git status"), ctx) is None
    assert gate.deny_refusal(write, write.args_model(path=".env", content="x"), ctx) == (
        "refused by the rule 'write(.env)' in [permissions] deny; do not retry it, find another way"
    )
    assert gate.deny_refusal(write, write.args_model(path="ok.txt", content="x"), ctx) is None
    glob = REGISTRY.get("glob")
    assert glob is not None
    assert gate.deny_refusal(glob, glob.args_model(pattern="*"), ctx) is None
    web = WebFetchTool()
    assert gate.deny_refusal(web, web.args_model(url="https://evil.example/"), ctx) == (
        "refused by the rule 'web(evil.example)' in [permissions] deny; do not retry it, find another way"
    )


async def test_read_only_approvals_refuse_changes_and_the_network_but_run_reads(tmp_path: Path) -> None:
    gate = PermissionGate(Rules.parse(allow=["bash", "write(**)", "web", "mcp"]), mode="read-only")
    ctx = context(tmp_path, gate)
    assert await check(gate, ctx, "bash", command="ls") == (
        "refused: bash can change the workspace and approvals are read-only (--permissions read-only)"
    )
    assert await check(gate, ctx, "write_file", path="a.txt", content="x") == (
        "refused: write_file can change the workspace and approvals are read-only (--permissions read-only)"
    )
    assert await check(gate, ctx, "web_fetch", url="https://docs.python.org/") == (
        "refused: web_fetch reaches the network and approvals are read-only (--permissions read-only)"
    )
    assert await check_mcp(gate, ctx, ServerTool()) == (
        "refused: docs__search can change the workspace and approvals are read-only (--permissions read-only)"
    )
    assert await check(gate, ctx, "read_file", path="a.txt") is None
    # A tool the server says is read-only is not refused: with no rule allowing it, it asks.
    hinted = PermissionGate(Rules(), mode="read-only")
    assert await check_mcp(hinted, context(tmp_path, hinted), HintedServerTool()) == no_terminal(
        "docs.search", "mcp(docs.search)", tool="docs__search"
    )


@pytest.mark.bwrap
async def test_read_only_approvals_run_bash_only_in_a_read_only_sandbox(tmp_path: Path) -> None:
    bwrap = require_bwrap()
    gate = PermissionGate(Rules(), mode="read-only")
    refused = "refused: bash can change the workspace and approvals are read-only (--permissions read-only)"
    assert await check(gate, context(tmp_path, gate, sandbox(bwrap, mode="read-only")), "bash", command="ls") is None
    assert await check(gate, context(tmp_path, gate, sandbox(bwrap)), "bash", command="ls") == refused
    no_box = NoSandbox(SandboxPolicy(mode="read-only"))
    assert await check(gate, context(tmp_path, gate, no_box), "bash", command="ls") == refused


@pytest.mark.parametrize("mode", ["auto", "ask"])
async def test_a_host_no_rule_allows_asks_in_every_mode(tmp_path: Path, mode: ApprovalMode) -> None:
    gate = PermissionGate(Rules(), mode=mode)
    ctx = context(tmp_path, gate, NoSandbox(SandboxPolicy(mode="full-access", network=True)))
    assert await check(gate, ctx, "web_fetch", url="https://Docs.Python.org/3/") == no_terminal(
        "docs.python.org", "web(docs.python.org)", tool="web_fetch"
    )
    allowed = PermissionGate(Rules.parse(allow=["web(docs.python.org)"]), mode=mode)
    assert await check(allowed, context(tmp_path, allowed), "web_fetch", url="https://docs.python.org/3/") is None


async def test_what_each_mode_runs_without_a_rule(tmp_path: Path) -> None:
    auto = PermissionGate(Rules(), mode="auto")
    ask = PermissionGate(Rules(), mode="ask")
    bare = context(tmp_path, auto)
    full = context(tmp_path, auto, NoSandbox(SandboxPolicy(mode="full-access")))
    # auto: a write and a server's tool run; a command runs only when confined or explicitly full-access.
    assert await check(auto, bare, "write_file", path="a.txt", content="x") is None
    assert await check_mcp(auto, bare, ServerTool()) is None
    assert await check(auto, full, "bash", command="ls") is None
    assert await check(auto, bare, "bash", command="ls") == no_terminal("ls", "bash(ls)")
    # ask: each of them asks, even in full-access; reads never do.
    assert await check(ask, full, "write_file", path="a.txt", content="x") == no_terminal(
        "a.txt", "write(a.txt)", tool="write_file"
    )
    assert await check(ask, full, "bash", command="ls") == no_terminal("ls", "bash(ls)")
    assert await check_mcp(ask, full, HintedServerTool()) == no_terminal(
        "docs.search", "mcp(docs.search)", tool="docs__search"
    )
    assert await check(ask, full, "read_file", path="a.txt") is None
    assert await check(ask, full, "list_dir", path=".") is None


@pytest.mark.bwrap
async def test_an_ask_rule_asks_even_in_auto(tmp_path: Path) -> None:
    box = sandbox(require_bwrap())
    gate = PermissionGate(Rules.parse(allow=["bash"], ask=["bash(rm:*)", "read(secrets/**)"]), mode="auto")
    ctx = context(tmp_path, gate, box)
    # An allow rule could never outrank the ask rule: the advice names the rule that asks instead.
    asks = "needs approval (the rule {!r} in [permissions] ask asks for it) and there is no terminal to ask; run it "
    way_out = "where a terminal can approve it, or remove that rule if it should run unasked"
    assert await check(gate, ctx, "bash", command="rm  -rf   build") == (
        "refused: bash `rm  -rf   build` " + asks.format("bash(rm:*)") + way_out
    )
    assert await check(gate, ctx, "bash", command="ls") is None
    assert await check(gate, ctx, "read_file", path="secrets/key") == (
        "refused: read_file `secrets/key` " + asks.format("read(secrets/**)") + way_out
    )


async def test_a_command_that_cannot_be_read_says_why_and_is_never_remembered(tmp_path: Path) -> None:
    gate = PermissionGate(Rules(), mode="ask")
    assert await check(gate, context(tmp_path, gate), "bash", command='echo "open') == (
        'refused: bash `echo "open` needs approval (it cannot be parsed into simple commands) and there is no '
        "terminal to ask; write it as simple commands, or run it where a terminal can approve it"
    )
    saved: list[str] = []
    asked = Asked(Answer(allow=True, always=True), Answer(allow=True, always=True))
    always = PermissionGate(Rules(), mode="ask", asker=asked, remember=saved.append)
    ctx = context(tmp_path, always)
    assert await check(always, ctx, "bash", command='echo "open') is None
    assert await check(always, ctx, "bash", command='echo "open') is None
    assert len(asked.questions) == 2 and saved == [] and always.rules.allow == ()


async def test_the_question_names_the_call_where_it_runs_and_the_rule_always_adds(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    asked = Asked(Answer(allow=True), Answer(allow=True), Answer(allow=True))
    gate = PermissionGate(Rules(), mode="ask", asker=asked)
    ctx = context(tmp_path, gate)
    assert await check(gate, ctx, "bash", command="git   status") is None
    assert await check(gate, ctx, "write_file", path="link/new.py", content="x") is None
    assert await check_mcp(gate, ctx, ServerTool(), query="trio", limit=3) is None
    bash, write, server = asked.questions
    assert bash == Question(
        tool="bash", subject="git   status", cwd=str(tmp_path), sandbox="no sandbox available", rule="bash(git status)"
    )
    # The rule names the file actually written (through the symlink), the question the path as given.
    assert (write.tool, write.subject, write.rule) == ("write_file", "link/new.py", "write(real/new.py)")
    # A server's tool shows its arguments (sorted, bounded) beside its name.
    assert (server.tool, server.subject, server.rule) == (
        "docs__search",
        'docs.search {"limit": 3, "query": "trio"}',
        "mcp(docs.search)",
    )
    long = Asked(Answer(allow=True))
    big = PermissionGate(Rules(), mode="ask", asker=long)
    assert await check_mcp(big, context(tmp_path, big), ServerTool(), text="y" * 2000) is None
    assert long.questions[0].subject == "docs.search " + ('{"text": "' + "y" * 2000)[:1000]


async def test_a_call_an_ask_rule_holds_is_asked_without_an_always(tmp_path: Path) -> None:
    asked = Asked(Answer(allow=True), Answer(allow=True), Answer(allow=True))
    gate = PermissionGate(Rules.parse(ask=["bash(rm:*)"]), mode="ask", asker=asked)
    ctx = context(tmp_path, gate)
    for command in ("rm -rf build", 'echo "open', "ls"):
        assert await check(gate, ctx, "bash", command=command) is None
    held, unreadable, plain = asked.questions
    assert (held.rule, held.can_save) == ("the ask rule bash(rm:*)", False)
    assert (unreadable.rule, unreadable.can_save) == ("it cannot be parsed into simple commands", False)
    assert (plain.rule, plain.can_save) == ("bash(ls)", True)


async def test_always_saves_the_rule_and_asks_no_more_but_once_asks_again(tmp_path: Path) -> None:
    saved: list[str] = []
    asked = Asked(Answer(allow=True, always=True), Answer(allow=True), Answer(allow=True))
    gate = PermissionGate(Rules.parse(deny=["bash(rm:*)"]), mode="ask", asker=asked, remember=saved.append)
    ctx = context(tmp_path, gate)
    assert await check(gate, ctx, "bash", command="make  test") is None
    assert await check(gate, ctx, "bash", command="make test") is None  # the saved rule allows it now
    assert saved == ["bash(make test)"] and len(asked.questions) == 1
    assert [r.text for r in gate.rules.allow] == ["bash(make test)"]
    assert [r.text for r in gate.rules.deny] == ["bash(rm:*)"]  # the other rules stay
    assert await check(gate, ctx, "bash", command="rm x") is not None
    # Yes once: allowed, nothing saved, the next call asks again.
    assert await check(gate, ctx, "bash", command="make lint") is None
    assert await check(gate, ctx, "bash", command="make lint") is None
    assert saved == ["bash(make test)"] and len(asked.questions) == 3
    # "Always" with nowhere to save it allows this call only.
    unsaved = PermissionGate(Rules(), mode="ask", asker=Asked(Answer(allow=True, always=True), Answer(allow=True)))
    assert await check(unsaved, context(tmp_path, unsaved), "bash", command="make") is None
    assert unsaved.rules.allow == ()


async def test_a_refused_question_tells_the_model_what_the_user_said(tmp_path: Path) -> None:
    asked = Asked(Answer(allow=False, note="use the staging bucket"), Answer(allow=False, note="   "))
    gate = PermissionGate(Rules(), mode="ask", asker=asked)
    ctx = context(tmp_path, gate)
    assert await check(gate, ctx, "bash", command="aws s3 rm s3://prod") == (
        "refused: the user declined bash `aws s3 rm s3://prod`. The user says: use the staging bucket"
    )
    assert await check(gate, ctx, "write_file", path="a.txt", content="x") == (
        "refused: the user declined write_file `a.txt`."
    )


DENIED_SECRETS = "refused by the rule 'write(secrets/**)' in [permissions] deny; do not retry it, find another way"


async def test_deny_follows_symlinks_server_tools_and_command_paths_after_a_hook_allowed(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "s").symlink_to("secrets")
    rules = Rules.parse(
        allow=["bash", "write(**)", "mcp"], deny=["write(secrets/**)", "bash(rm:*)", "mcp(docs.search)"]
    )
    gate = PermissionGate(rules, mode="auto")
    ctx = context(tmp_path, gate)
    bash, write = REGISTRY.get("bash"), REGISTRY.get("write_file")
    assert bash is not None and write is not None
    # A redirect or a write through a symlink into a denied folder is refused, before and after a hook allowed it.
    assert await check(gate, ctx, "bash", command="echo x > s/key") == DENIED_SECRETS
    assert gate.deny_refusal(bash, bash.args_model(command="echo x > s/key"), ctx) == DENIED_SECRETS
    assert gate.deny_refusal(write, write.args_model(path="s/key", content="x"), ctx) == DENIED_SECRETS
    assert gate.deny_refusal(write, write.args_model(path="../s/key", content="x"), ctx) is None  # not ours to refuse
    # A command named by its absolute path is still that command.
    assert gate.deny_refusal(bash, bash.args_model(command="/bin/rm -rf build"), ctx) == (
        "refused by the rule 'bash(rm:*)' in [permissions] deny; do not retry it, find another way"
    )
    # A server's tool is denied by its rule subject (server.tool), not by its name in the registry.
    assert gate.deny_refusal(ServerTool(), ServerArgs(query="x"), ctx) == (
        "refused by the rule 'mcp(docs.search)' in [permissions] deny; do not retry it, find another way"
    )
    assert await check_mcp(gate, ctx, ServerTool()) == gate.deny_refusal(ServerTool(), ServerArgs(), ctx)


async def test_a_url_argument_makes_no_web_call_of_a_tool_other_than_web_fetch(tmp_path: Path) -> None:
    gate = PermissionGate(Rules.parse(deny=["web"]), mode="read-only")
    ctx = context(tmp_path, gate)
    assert await gate.check(PlainTool(), ServerArgs(url="https://evil.example/"), ctx) is None
    assert gate.deny_refusal(PlainTool(), ServerArgs(url="https://evil.example/"), ctx) is None
    assert await check(gate, ctx, "web_fetch", url="https://evil.example/") == (
        "refused by the rule 'web' in [permissions] deny; do not retry it, find another way"
    )


async def test_a_host_or_server_tool_named_like_a_workspace_symlink_is_ruled_by_its_name(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "docs.python.org").symlink_to("real")
    (tmp_path / "docs.search").symlink_to("real")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "s").symlink_to("secrets")
    asked = Asked(Answer(allow=True), Answer(allow=True), Answer(allow=True))
    gate = PermissionGate(Rules.parse(ask=["read(secrets/**)"]), mode="ask", asker=asked)
    ctx = context(tmp_path, gate)
    assert await check(gate, ctx, "web_fetch", url="https://docs.python.org/3/") is None
    assert await check_mcp(gate, ctx, ServerTool()) is None
    assert await check(gate, ctx, "read_file", path="s/key") is None
    assert [(q.subject, q.rule) for q in asked.questions] == [
        ("docs.python.org", "web(docs.python.org)"),
        ("docs.search {}", "mcp(docs.search)"),
        ("s/key", "the ask rule read(secrets/**)"),  # a file: ruled where it leads (the ask rule holds it)
    ]


async def test_always_on_a_call_an_ask_rule_asked_for_saves_nothing_and_ask_rules_outlive_always(
    tmp_path: Path,
) -> None:
    saved: list[str] = []
    asked = Asked(*(Answer(allow=True, always=True) for _ in range(4)))
    gate = PermissionGate(Rules.parse(ask=["bash(git push:*)"]), mode="ask", asker=asked, remember=saved.append)
    ctx = context(tmp_path, gate)
    # The ask rule outranks any allow rule: a saved one would never stop the question, so nothing is saved.
    assert await check(gate, ctx, "bash", command="git push origin") is None
    assert saved == [] and gate.rules.allow == ()
    assert await check(gate, ctx, "bash", command="git push origin") is None
    assert len(asked.questions) == 2
    # "Always" on a call no rule asked for saves its rule; the ask rules stay and still ask.
    assert await check(gate, ctx, "bash", command="git status") is None
    assert saved == ["bash(git status)"]
    assert [r.text for r in gate.rules.ask] == ["bash(git push:*)"]
    assert await check(gate, ctx, "bash", command="git push origin") is None
    assert len(asked.questions) == 4
