"""Custom slash commands: ``.reasonix/commands/NAME.md`` and Claude Code's ``.claude/commands/NAME.md`` become
``/NAME [args]`` in ``reasonix code`` (a built-in command of the same name wins; ``.reasonix/`` wins over
``.claude/``).

The body is the user message that ``/NAME`` sends, with ``$ARGUMENTS`` replaced by what follows the name (and ``$1``
... ``$9`` by its words); without a placeholder the arguments follow the body. Front matter may give a
``description`` (shown by ``/help``), ``model: pro`` (the turn runs on pro) and ``allowed-tools`` (the turn may call
only those: :mod:`orchestrator.extensions.allowed_tools`). A command is only text for the model:
it runs no program of its own, so a cloned repository's commands cannot run anything that the sandbox and the
permission rules would not let the model run anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.extensions.allowed_tools import AllowedList
from orchestrator.extensions.front_matter import parse_front_matter, text_of

COMMAND_DIRS = (Path(".reasonix") / "commands", Path(".claude") / "commands")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_COMMAND_BYTES = 64 * 1024


@dataclass(frozen=True)
class CustomCommand:
    name: str
    description: str
    body: str
    model: str
    """``flash``, ``pro`` or "" (the conversation's model)."""
    source: str
    """The file, relative to the workspace."""
    allowed: AllowedList | None = None
    """``allowed-tools``: the tools its turn may call (None: no limit beyond the conversation's)."""

    def message(self, arguments: str) -> str:
        """The user message for ``/NAME arguments``."""
        words = arguments.split()
        text = self.body
        placed = "$ARGUMENTS" in text or re.search(r"\$[1-9]", text) is not None
        text = text.replace("$ARGUMENTS", arguments.strip())
        text = re.sub(r"\$([1-9])", lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text)
        if arguments.strip() and not placed:
            text = f"{text.rstrip()}\n\n{arguments.strip()}"
        return text.strip()


def _read(path: Path, workspace: Path) -> CustomCommand | None:
    try:
        if path.stat().st_size > MAX_COMMAND_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    meta, body = parse_front_matter(text)
    first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    return CustomCommand(
        name=path.stem,
        description=text_of(meta, "description") or first[:80],
        body=body,
        model=text_of(meta, "model") if text_of(meta, "model") in ("flash", "pro") else "",
        source=str(path.relative_to(workspace)),
        allowed=AllowedList.parse(meta["allowed_tools"]) if meta.get("allowed_tools") else None,
    )


def find_custom_commands(workspace: Path, *, taken: frozenset[str] = frozenset()) -> dict[str, CustomCommand]:
    """The workspace's commands by name (without the slash), sorted; ``taken`` names (the built-ins) are left out."""
    found: dict[str, CustomCommand] = {}
    for folder in COMMAND_DIRS:
        directory = workspace / folder
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.md")):
            if not NAME.match(path.stem) or path.stem in found or path.stem in taken or not path.is_file():
                continue
            command = _read(path, workspace)
            if command is not None:
                found[command.name] = command
    return dict(sorted(found.items()))
