"""Completion of slash commands and ``@path`` mentions."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from orchestrator.repl.commands import COMMANDS
from orchestrator.repl.prompt import ReplCompleter


def _complete(completer: ReplCompleter, text: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def test_slash_commands_and_paths_complete(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / ".reasonix").mkdir()
    completer = ReplCompleter(list(COMMANDS), tmp_path)
    assert _complete(completer, "/c") == ["/cost", "/context", "/compact", "/clear"]
    assert _complete(completer, "/plan add") == []
    assert _complete(completer, "look at @s") == ["setup.cfg", "src/"]
    assert _complete(completer, "look at @src/a") == ["src/app.py"]
    assert _complete(completer, "@../") == []  # nothing outside the workspace
    assert _complete(completer, "@.rea") == []  # the state directory is never offered
