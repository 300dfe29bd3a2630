"""The approval prompt and "always": the whole command, cwd and sandbox are shown; an "always" rule is saved to
reasonix.local.toml, which stays trusted because the user wrote it by answering."""

from __future__ import annotations

from pathlib import Path

from orchestrator.config.model import load_config
from orchestrator.policy.approval import terminal_asker
from orchestrator.policy.commands import command_setup, remember_rule
from sessions.permissions import Question


async def test_the_prompt_shows_everything_and_reads_the_answer() -> None:
    shown: list[str] = []
    answers = iter(["maybe\n", "a\n", "n\n", "use the Makefile\n"])
    ask = terminal_asker(write=shown.append, read=lambda: next(answers))
    command = "python -m pytest tests/ -k 'not slow' && " + "x" * 300
    question = Question(tool="bash", subject=command, cwd="/w", sandbox="bubblewrap · workspace-write", rule="r")
    always = await ask(question)
    assert always.allow and always.always
    assert command in "".join(shown) and "in /w" in "".join(shown) and "bubblewrap" in "".join(shown)
    declined = await ask(question)
    assert not declined.allow and declined.note == "use the Makefile"


def test_always_is_saved_to_the_local_file_and_trusted(tmp_path: Path) -> None:
    ws, xdg = tmp_path / "ws", tmp_path / "xdg"
    ws.mkdir()
    (ws / "reasonix.local.toml").write_text('[permissions]\ndeny = ["bash(rm:*)"]\n')
    env = {"XDG_CONFIG_HOME": str(xdg)}
    remember_rule(ws, "bash(npm test:*)", xdg / "reasonix" / "config.toml")
    resolved = load_config(workspace=ws, env=env)
    assert resolved.config.permissions.allow == ["bash(npm test:*)"]
    assert resolved.config.permissions.deny == ["bash(rm:*)"]
    setup = command_setup(resolved, ws, env=env)
    assert setup.gate.rules.for_command("npm test -- x").decision == "allow"
