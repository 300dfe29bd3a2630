"""The approval prompt and "always": the whole command, cwd and sandbox are shown; an "always" rule is saved to
reasonix.local.toml, which stays trusted because Reasonix wrote it when the user answered (a file Reasonix did not write
is never extended: tests/orchestrator/test_hardening_trust.py)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.config.model import load_config
from orchestrator.config.rules_file import remember_rule
from orchestrator.config.trust import record_trust, trust_path
from orchestrator.policy.commands import command_setup
from orchestrator.ui.approval import terminal_asker
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


async def test_where_nothing_could_be_saved_there_is_no_always() -> None:
    shown: list[str] = []
    answers = iter(["a\n", "y\n"])
    ask = terminal_asker(write=shown.append, read=lambda: next(answers))
    held = Question(
        tool="bash", subject="rm x", cwd="/w", sandbox="none", rule="the ask rule bash(rm:*)", can_save=False
    )
    once = await ask(held)
    assert once.allow and not once.always  # "a" was not taken: it is asked again, and y answers once
    text = "".join(shown)
    assert "[y] yes once  [n] no  (asked every time: the ask rule bash(rm:*)): " in text and "[a]" not in text
    assert "press y or n: " in text and "saved to" not in text


def test_always_is_saved_to_the_local_file_and_trusted(tmp_path: Path) -> None:
    ws, xdg = tmp_path / "ws", tmp_path / "xdg"
    ws.mkdir()
    (ws / "reasonix.local.toml").write_text('# mine\n[permissions]\ndeny = ["bash(rm:*)"]\n')
    env = {"XDG_CONFIG_HOME": str(xdg)}
    store = trust_path(xdg / "reasonix" / "config.toml")
    record_trust(store, [ws / "reasonix.local.toml"])  # the user trusted the file as it is
    remember_rule(ws, "bash(npm test:*)", store)
    assert (ws / "reasonix.local.toml").read_text().startswith("# mine\n")
    resolved = load_config(workspace=ws, env=env)
    assert resolved.config.permissions.allow == ["bash(npm test:*)"]
    assert resolved.config.permissions.deny == ["bash(rm:*)"]
    setup = command_setup(resolved, ws, env=env)
    assert setup.gate.rules.for_command("npm test -- x").decision == "allow"
