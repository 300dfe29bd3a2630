"""The input line: prompt_toolkit with a per-workspace history (``.reasonix/repl_history``, Ctrl-R searches it),
completion of slash commands and ``@path`` mentions, Shift+Tab to cycle the mode, Esc then Enter (or Alt+Enter) for
a new line, Esc Esc on an empty line for ``/rewind``, and a bottom status line.

prompt_toolkit runs its own event loop inside :meth:`PromptSession.prompt`; the conversation runs under trio, so
:class:`InputLine` is read from a trio worker thread (``trio.to_thread.run_sync``). The terminal is in raw mode only
while the prompt is shown: Ctrl-C there is a key (clear the line; on an empty line: exit after a second press), and
during a turn it is SIGINT, which the conversation turns into a cancellation of the turn.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from orchestrator.goal.store import StateDirError, ensure_state_dir

HISTORY_FILE = "repl_history"
REWIND_COMMAND = "/rewind"
"""What Esc Esc on an empty line runs."""
_SKIP = frozenset({".git", ".reasonix", "__pycache__", ".venv", "node_modules"})


class ReplCompleter(Completer):
    """Slash commands at the start of the line; workspace paths after ``@``."""

    def __init__(self, commands: Sequence[str], workspace: Path) -> None:
        self.commands = commands
        self.workspace = workspace

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name in self.commands:
                if name.startswith(before):
                    yield Completion(name, start_position=-len(before))
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _paths(self, typed: str) -> Iterable[Completion]:
        folder, _, stem = typed.rpartition("/")
        base = (self.workspace / folder).resolve()
        if not base.is_relative_to(self.workspace.resolve()) or not base.is_dir():
            return
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name in _SKIP or not entry.name.startswith(stem):
                continue
            if stem == "" and entry.name.startswith("."):
                continue
            name = f"{folder}/{entry.name}" if folder else entry.name
            suffix = "/" if entry.is_dir() else ""
            yield Completion(name + suffix, start_position=-len(typed), display=entry.name + suffix)


class InputLine:
    """One prompt_toolkit session for the conversation. :meth:`read` blocks (call it in a worker thread); it raises
    :class:`KeyboardInterrupt` for Ctrl-C on an empty line and :class:`EOFError` for Ctrl-D on an empty line."""

    def __init__(
        self,
        workspace: Path,
        commands: Sequence[str],
        *,
        on_shift_tab: Callable[[], None],
        status: Callable[[], FormattedText],
        prompt_text: Callable[[], FormattedText],
    ) -> None:
        history_dir = ensure_state_dir(workspace)
        if (history_dir / HISTORY_FILE).is_symlink():
            raise StateDirError(
                f"{history_dir / HISTORY_FILE} is a symlink: Reasonix never writes the input history through a link;"
                " remove it and start again"
            )
        bindings = KeyBindings()

        @bindings.add("s-tab")
        def _cycle(event: KeyPressEvent) -> None:
            on_shift_tab()
            event.app.invalidate()

        @bindings.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        @bindings.add("escape", "escape", filter=Condition(lambda: not get_app().current_buffer.text))
        def _rewind(event: KeyPressEvent) -> None:
            event.app.exit(result=REWIND_COMMAND)

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        self._prompt_text = prompt_text
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history_dir / HISTORY_FILE)),
            completer=ReplCompleter(commands, workspace),
            complete_while_typing=True,
            key_bindings=bindings,
            bottom_toolbar=status,
            enable_history_search=False,
            prompt_continuation="… ",
        )

    def read(self, default: str = "") -> str:
        """One line; ``default``: what was typed during the last turn without Enter."""
        return self.session.prompt(self._prompt_text, default=default)
