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
from pathlib import Path, PurePosixPath

from orchestrator.extensions.allowed_tools import AllowedList
from orchestrator.extensions.front_matter import parse_front_matter, text_of
from sessions.tools.gateway import GIT_DIR, GatewayRoot

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


def _read(root: GatewayRoot, rel: str) -> CustomCommand | None:
    found = root.try_read(rel, limit=MAX_COMMAND_BYTES)
    if found is None or found.truncated:
        return None
    text = found.data.decode("utf-8", errors="replace")
    meta, body = parse_front_matter(text)
    first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    return CustomCommand(
        name=PurePosixPath(rel).stem,
        description=text_of(meta, "description") or first[:80],
        body=body,
        model=text_of(meta, "model") if text_of(meta, "model") in ("flash", "pro") else "",
        source=rel,
        allowed=AllowedList.parse(meta["allowed_tools"]) if meta.get("allowed_tools") else None,
    )


def find_custom_commands(workspace: Path, *, taken: frozenset[str] = frozenset()) -> dict[str, CustomCommand]:
    """The workspace's commands by name (without the slash), sorted; ``taken`` names (the built-ins) are left out."""
    found: dict[str, CustomCommand] = {}
    root = GatewayRoot(workspace, refused=frozenset({GIT_DIR}))
    for folder in COMMAND_DIRS:
        for entry in root.names(folder.as_posix()):
            stem = entry[: -len(".md")]
            if not entry.endswith(".md") or not NAME.match(stem) or stem in found or stem in taken:
                continue
            command = _read(root, f"{folder.as_posix()}/{entry}")
            if command is not None:
                found[command.name] = command
    return dict(sorted(found.items()))
