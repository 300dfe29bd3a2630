"""Issue 43 items 5 and 18: the host-side readers of skills, agent profiles, memory files and the ``remember`` tool
never follow a symlink out of their root, and a memory file that is ``/dev/zero`` or a FIFO neither exhausts memory
nor hangs a session's start. Through the real readers and tools; the symlinks are made by sandboxed bash where
bubblewrap is present, as in the attack. Each fails on 05d9218."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest
import trio

from orchestrator.extensions.skill_tool import SkillArgs, SkillTool
from orchestrator.extensions.skills import find_skills
from orchestrator.memory.tool import RememberArgs, RememberTool
from orchestrator.subagents.profiles import agents_index, find_profiles
from sessions.prompt import load_standing_memory
from sessions.tools import ToolContext, ToolError, default_registry
from tests.support.bwrap import require_bwrap, sandbox
from tests.support.tools import call

SECRET = "api_key = 'sk-SECRET-43'\n"
ROOT = Path(__file__).resolve().parents[3]


def _home(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace, the user's config directory holding a key, and a file outside both."""
    ws, config = tmp_path / "ws", tmp_path / "home" / ".config" / "reasonix"
    ws.mkdir()
    config.mkdir(parents=True)
    (config / "config.toml").write_text(SECRET)
    (ws / ".git").mkdir()
    (ws / ".claude" / "skills" / "honest").mkdir(parents=True)
    (ws / ".claude" / "skills" / "honest" / "SKILL.md").write_text("---\ndescription: fine\n---\nDo it well.\n")
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    return ws, config, outside


def _links(ws: Path, config: Path, outside: Path) -> dict[str, str]:
    secret = str(config / "config.toml")
    return {
        ".claude/skills/k/SKILL.md": secret,
        ".reasonix/skills/j.md": str(outside),
        ".claude/agents/spy.md": secret,
        ".reasonix/agents/relative.md": "../../../outside.txt",
        "AGENTS.md": secret,
        "REASONIX.md": "/proc/self/environ",
        "REASONIX.local.md": str(outside),
    }


def _link_in_sandbox(ws: Path, links: dict[str, str]) -> None:
    """Make the links the way the attack did: the bash tool in the sandbox (the real bubblewrap)."""
    ctx = ToolContext(root=ws, sandbox=sandbox(require_bwrap()))
    script = " && ".join(f"mkdir -p \"$(dirname '{n}')\" && ln -s '{t}' '{n}'" for n, t in links.items())
    result = trio.run(
        partial(call, default_registry(use_ripgrep=False), ctx, "bash", command=script + " && echo linked")
    )
    assert "linked" in result.content, result.content
    assert all((ws / name).is_symlink() for name in links)


def test_skills_profiles_and_memory_files_never_read_through_a_link_out(tmp_path: Path) -> None:
    ws, config, outside = _home(tmp_path)
    links = _links(ws, config, outside)
    for name, target in links.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, ws / name)
    (config / "skills").mkdir()
    os.symlink(outside, config / "skills" / "mine.md")  # the config directory is a root too
    skills = find_skills(ws, config)
    assert sorted(skills) == ["honest"]
    assert "sk-SECRET" not in repr(skills)
    profiles = find_profiles(ws)
    assert profiles == {} and "sk-SECRET" not in agents_index(profiles)
    memory = load_standing_memory(ws, config_dir=config)
    assert "sk-SECRET" not in memory.render() and "PATH=" not in memory.render()
    assert [f.label for f in memory.files] == []

    async def skill(name: str) -> str:
        try:
            return (await SkillTool(ws, config).run(SkillArgs(name=name), ToolContext(root=ws))).content
        except ToolError as exc:
            return exc.message

    assert trio.run(skill, "k") == "no skill named 'k'; the skills are: honest"
    assert "Do it well." in trio.run(skill, "honest")


def test_links_inside_the_workspace_still_work(tmp_path: Path) -> None:
    ws, config, _ = _home(tmp_path)
    (ws / "docs").mkdir()
    (ws / "docs" / "agents.md").write_text("Be brief.\n")
    (ws / "AGENTS.md").symlink_to("docs/agents.md")
    (ws / ".claude" / "skills" / "alias").symlink_to("honest")
    assert [f.text for f in load_standing_memory(ws).files] == ["Be brief.\n"]
    assert sorted(find_skills(ws, config)) == ["alias", "honest"]


def test_remember_never_copies_a_linked_file_in_nor_writes_outside(tmp_path: Path) -> None:
    ws, _, outside = _home(tmp_path)
    (ws / "REASONIX.local.md").symlink_to(outside)

    async def remember() -> str:
        try:
            return (await RememberTool().run(RememberArgs(note="tests: pytest -q"), ToolContext(root=ws))).content
        except ToolError as exc:
            return exc.message

    said = trio.run(remember)
    assert "sk-SECRET" not in said
    assert outside.read_text() == SECRET
    local = ws / "REASONIX.local.md"
    assert local.is_symlink() or "sk-SECRET" not in local.read_text()
    assert said.startswith("cannot read REASONIX.local.md: refused:")


@pytest.mark.bwrap
def test_links_made_by_sandboxed_bash_are_not_followed(tmp_path: Path) -> None:
    ws, config, outside = _home(tmp_path)
    # .reasonix/ is read-only in the sandbox: the links a sandboxed command can make are the others.
    _link_in_sandbox(ws, {k: v for k, v in _links(ws, config, outside).items() if not k.startswith(".reasonix/")})
    assert sorted(find_skills(ws, config)) == ["honest"]
    assert find_profiles(ws) == {}
    assert "sk-SECRET" not in load_standing_memory(ws, config_dir=config).render()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "dev-urandom"])
def test_a_memory_file_that_never_ends_or_never_opens_is_skipped_at_once(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "REASONIX.md").write_text("Use tabs.\n")
    if kind == "fifo":
        os.mkfifo(ws / "AGENTS.md")
    else:
        (ws / "AGENTS.md").symlink_to("/dev/zero" if kind == "dev-zero" else "/dev/urandom")
    program = textwrap.dedent(f"""
        from pathlib import Path
        from sessions.prompt import load_standing_memory
        print([f.label for f in load_standing_memory(Path({str(ws)!r})).files])
    """)
    # A child under a 2 GiB address-space limit and a generous timeout: on 05d9218 the FIFO blocks the open for
    # good and /dev/zero is read until memory runs out (there: MemoryError, not this machine's memory).
    try:
        done = subprocess.run(
            [sys.executable, "-c", program],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("loading standing memory hung on the memory file")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['REASONIX.md']"
