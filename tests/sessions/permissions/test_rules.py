"""Permission rules and the gate, with real commands through the dispatcher."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.permissions import Answer, PermissionGate, Question, Rules, split_command
from sessions.sandbox import NoSandbox, SandboxPolicy
from sessions.tools import ToolContext, default_registry
from tests.support.bwrap import require_bwrap, sandbox
from tests.support.tools import call

REGISTRY = default_registry(use_ripgrep=False)


def test_compound_commands_split_into_every_simple_command() -> None:
    assert split_command("git status") == ["git status"]
    assert split_command("git status && rm -rf .") == ["git status", "rm -rf ."]
    assert split_command("a | b; (c x); echo $(d y)") == ["a", "b", "c x", "echo $(d y)", "d y"]
    assert split_command('echo "unterminated') is None


def test_exact_and_prefix_rules_and_precedence() -> None:
    rules = Rules.parse(allow=["bash(git status)", "bash(npm test:*)", "bash(rm:*)"], deny=["bash(rm -rf:*)"])
    assert rules.for_command("git status").decision == "allow"
    assert rules.for_command("git  status").decision == "allow"
    assert rules.for_command("git status --short").decision is None
    assert rules.for_command("npm test -- -k x").decision == "allow"
    assert rules.for_command("npm tests").decision is None
    assert rules.for_command("git status && rm -rf .").decision == "deny"  # deny beats allow, part by part
    assert rules.for_command("rm -rf build").decision == "deny"
    assert rules.for_command("git status && curl x").decision is None  # one part no rule allows
    assert rules.for_command('echo "open').decision == "ask"
    paths = Rules.parse(allow=["write(src/**)"], deny=["read(secrets/**)"], ask=["write(src/main.py)"])
    assert paths.for_path("write", "src/a/b.py").decision == "allow"
    assert paths.for_path("write", "src/main.py").decision == "ask"
    assert paths.for_path("write", "docs/x.md").decision is None
    assert paths.for_path("read", "secrets/key.pem").decision == "deny"


@given(st.text(max_size=40))
def test_an_allowed_command_never_lets_another_through(tail: str) -> None:
    rules = Rules.parse(allow=["bash(git status)"])
    verdict = rules.for_command("git status && " + tail)
    assert verdict.decision != "allow" or all(p == "git status" for p in split_command("git status && " + tail) or [])


async def test_deny_refuses_as_a_tool_result_and_nothing_runs(tmp_path: Path) -> None:
    gate = PermissionGate(Rules.parse(allow=["bash(touch:*)"], deny=["bash(touch evil)"]), mode="auto")
    ctx = ToolContext(root=tmp_path, gate=gate)
    result = await call(REGISTRY, ctx, "bash", command="touch ok && touch evil")
    assert result.is_error and result.data == {"refused": "permission"}
    assert "bash(touch evil)" in result.content
    assert not (tmp_path / "ok").exists() and not (tmp_path / "evil").exists()


async def test_ask_without_a_terminal_names_the_rule_to_add(tmp_path: Path) -> None:
    ctx = ToolContext(root=tmp_path, gate=PermissionGate(Rules(), mode="ask"))
    result = await call(REGISTRY, ctx, "bash", command="touch x")
    assert result.is_error and "'bash(touch x)'" in result.content and "[permissions] allow" in result.content
    assert not (tmp_path / "x").exists()
    unparseable = await call(
        REGISTRY, ToolContext(root=tmp_path, gate=PermissionGate(Rules())), "bash", command='echo "open'
    )
    assert "cannot be parsed" in unparseable.content


async def test_auto_without_a_sandbox_asks_and_the_answer_counts(tmp_path: Path) -> None:
    asked: list[Question] = []
    remembered: list[str] = []

    async def asker(question: Question) -> Answer:
        asked.append(question)
        return Answer(allow=True, always=True) if len(asked) == 1 else Answer(allow=False, note="use make")

    gate = PermissionGate(Rules(), mode="auto", asker=asker, remember=remembered.append)
    ctx = ToolContext(root=tmp_path, gate=gate)
    first = await call(REGISTRY, ctx, "bash", command="echo one > a")
    again = await call(REGISTRY, ctx, "bash", command="echo one > a")  # "always": no second question
    other = await call(REGISTRY, ctx, "bash", command="touch b")
    assert first.content == again.content == "[exit code 0]"
    assert [q.subject for q in asked] == ["echo one > a", "touch b"]
    assert asked[0].sandbox == "no sandbox available" and asked[0].cwd == str(tmp_path)
    assert remembered == ["bash(echo one > a)"]
    assert other.content == "refused: the user declined bash `touch b`. The user says: use make"


@pytest.mark.bwrap
async def test_auto_in_a_sandbox_runs_without_asking(tmp_path: Path) -> None:
    box = sandbox(require_bwrap())
    ctx = ToolContext(root=tmp_path, sandbox=box, gate=PermissionGate(Rules(), mode="auto"))
    assert (await call(REGISTRY, ctx, "bash", command="touch x")).content == "[exit code 0]"


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
@pytest.mark.bwrap
async def test_a_read_only_session_runs_bash_in_the_read_only_sandbox(tmp_path: Path, mode: str) -> None:
    (tmp_path / "a.txt").write_text("kept")
    ctx = ToolContext(root=tmp_path, sandbox=sandbox(require_bwrap(), mode=mode))
    result = await call(REGISTRY, ctx, "bash", read_only=True, command="cat a.txt; echo x > a.txt")
    assert result.content.startswith("kept") and "Read-only file system" in result.content
    assert (tmp_path / "a.txt").read_text() == "kept"
    # write_file stays refused, and so does bash without a sandbox.
    refused = await call(REGISTRY, ctx, "write_file", read_only=True, path="a.txt", content="x")
    assert refused.data == {"refused": "read_only"}
    plain = await call(REGISTRY, ToolContext(root=tmp_path), "bash", read_only=True, command="true")
    assert plain.data == {"refused": "read_only"}
    full = ToolContext(root=tmp_path, sandbox=sandbox(require_bwrap()).with_mode("full-access"))
    assert (await call(REGISTRY, full, "bash", read_only=True, command="true")).data == {"refused": "read_only"}
    assert SandboxPolicy().mode == "workspace-write"


async def test_read_only_approvals_refuse_changes_but_not_reads(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("kept")
    ctx = ToolContext(root=tmp_path, gate=PermissionGate(Rules.parse(allow=["bash(touch:*)"]), mode="read-only"))
    assert "read-only" in (await call(REGISTRY, ctx, "bash", command="touch x")).content
    assert "read-only" in (await call(REGISTRY, ctx, "write_file", path="b.txt", content="x")).content
    assert "kept" in (await call(REGISTRY, ctx, "read_file", path="a.txt")).content
    assert not (tmp_path / "x").exists() and not (tmp_path / "b.txt").exists()


async def test_explicit_full_access_runs_in_auto_but_an_unavailable_sandbox_asks(tmp_path: Path) -> None:
    full = ToolContext(
        root=tmp_path,
        sandbox=NoSandbox(SandboxPolicy(mode="full-access")),
        gate=PermissionGate(Rules(), mode="auto"),
    )
    assert (await call(REGISTRY, full, "bash", command="true")).content == "[exit code 0]"
    missing = ToolContext(root=tmp_path, sandbox=NoSandbox(), gate=PermissionGate(Rules(), mode="auto"))
    assert "needs approval" in (await call(REGISTRY, missing, "bash", command="true")).content


async def test_path_rules_match_what_the_file_tools_resolve(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "src" / "link").symlink_to("../secrets")
    (tmp_path / ".env").write_text("TOKEN=1")
    rules = Rules.parse(
        allow=["write(src/**)"], deny=["write(.env)", "read(.env)", "write(secrets/**)", "write(.github/**)"]
    )
    ctx = ToolContext(root=tmp_path, gate=PermissionGate(rules, mode="ask"))
    for path in (".env", "./.env", ".github/workflows/ci.yml", "x/../secrets/key", "src/link/key"):
        result = await call(REGISTRY, ctx, "write_file", path=path, content="pwned")
        assert result.data == {"refused": "permission"} and "in [permissions] deny" in result.content, path
    read = await call(REGISTRY, ctx, "read_file", path=".env")
    assert read.data == {"refused": "permission"} and "TOKEN" not in read.content
    # allow write(src/**) allows neither a path that climbs out of src/ nor one that leaves it through a symlink
    loose = ToolContext(root=tmp_path, gate=PermissionGate(Rules.parse(allow=["write(src/**)"]), mode="ask"))
    for path in ("src/../secrets/key", "src/link/key"):
        result = await call(REGISTRY, loose, "write_file", path=path, content="pwned")
        assert "needs approval" in result.content and "'write(secrets/key)'" in result.content, path
    assert (await call(REGISTRY, loose, "write_file", path="src/./ok.py", content="x")).content.startswith("created")
    assert (tmp_path / ".env").read_text() == "TOKEN=1"
    assert sorted(p.name for p in (tmp_path / "secrets").iterdir()) == []
    assert not (tmp_path / ".github").exists()


async def test_a_redirection_is_a_write_the_write_rules_judge(tmp_path: Path) -> None:
    rules = Rules.parse(allow=["bash(echo:*)", "write(out/**)"], deny=["write(.env)"])
    ctx = ToolContext(root=tmp_path, gate=PermissionGate(rules, mode="ask"))
    (tmp_path / "out").mkdir()
    assert (await call(REGISTRY, ctx, "bash", command="echo hi > out/a.txt")).content == "[exit code 0]"
    denied = await call(REGISTRY, ctx, "bash", command="echo hi > ./.env")
    asked = await call(REGISTRY, ctx, "bash", command="echo hi > b.txt")
    assert "'write(.env)' in [permissions] deny" in denied.content and "needs approval" in asked.content
    assert (tmp_path / "out" / "a.txt").read_text() == "hi\n"
    assert not (tmp_path / ".env").exists() and not (tmp_path / "b.txt").exists()
