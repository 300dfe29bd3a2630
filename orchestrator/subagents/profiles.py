"""Subagent profiles: Markdown files with front matter in ``.reasonix/agents/`` and Claude Code's ``.claude/agents/``
(the first one of a name wins, in that order).

Front matter: ``name`` (default: the file's name), ``description`` (when to use it; default: the body's first line),
``tools`` (names from the built-in tools; default: every read-only one), ``model`` (``flash``, ``pro`` or an id;
default ``flash``), ``effort`` (``high`` / ``max``), ``read_only`` (default ``true``; ``false`` lets it write, in a
copy of the workspace merged back when it reports) and ``max_requests`` (default 20). The body is the subagent's
system prompt. A skill with ``run_as = subagent`` is a profile too (:func:`skill_profiles`); a profile file of the
same name wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orchestrator.extensions.front_matter import parse_front_matter, text_of
from orchestrator.extensions.skills import find_skills
from sessions.tools.gateway import GIT_DIR, GatewayRoot

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_PROFILE_BYTES = 64 * 1024
AGENT_DIRS = (Path(".reasonix") / "agents", Path(".claude") / "agents")
INDEX_HEADING = "# Subagents"
DEFAULT_MAX_REQUESTS = 20


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    system: str
    """The body: the subagent's system prompt."""
    source: str
    tools: tuple[str, ...] = ()
    """Empty: every read-only built-in tool (every tool for a writing profile)."""
    model: str = "flash"
    effort: str = ""
    read_only: bool = True
    max_requests: int = DEFAULT_MAX_REQUESTS


def _flag(value: str, default: bool) -> bool:
    value = value.strip().lower()
    if value in ("false", "no", "0"):
        return False
    if value in ("true", "yes", "1"):
        return True
    return default


def _read(root: GatewayRoot, label: str) -> Profile | None:
    found = root.try_read(label, limit=MAX_PROFILE_BYTES)
    if found is None or found.truncated:
        return None
    text = found.data.decode("utf-8", errors="replace")
    meta, body = parse_front_matter(text)
    name = text_of(meta, "name") or PurePosixPath(label).stem
    if not NAME.match(name) or not body.strip():
        return None
    first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    raw_tools = meta.get("tools", [])
    tools = raw_tools if isinstance(raw_tools, list) else [t for t in raw_tools.split(",")]
    limit = text_of(meta, "max_requests")
    return Profile(
        name=name,
        description=" ".join((text_of(meta, "description") or first).split())[:300],
        system=body.strip(),
        source=label,
        tools=tuple(sorted({t.strip() for t in tools if t.strip()})),
        model=text_of(meta, "model") or "flash",
        effort=text_of(meta, "effort"),
        read_only=_flag(text_of(meta, "read_only"), True),
        max_requests=int(limit) if limit.isdigit() and int(limit) > 0 else DEFAULT_MAX_REQUESTS,
    )


def find_profiles(workspace: Path) -> dict[str, Profile]:
    """Every profile by name, sorted by name."""
    profiles: dict[str, Profile] = {}
    root = GatewayRoot(workspace, refused=frozenset({GIT_DIR}))
    for directory in AGENT_DIRS:
        for entry in root.names(directory.as_posix()):
            profile = _read(root, f"{directory.as_posix()}/{entry}") if entry.endswith(".md") else None
            if profile is not None and profile.name not in profiles:
                profiles[profile.name] = profile
    return dict(sorted(profiles.items()))


def skill_profiles(workspace: Path, config_dir: Path | None) -> dict[str, Profile]:
    """Skills with ``run_as = subagent`` as profiles: the skill's body is the subagent's system prompt, its ``tools``
    and ``model`` the subagent's (read-only)."""
    return {
        name: Profile(
            name=name,
            description=skill.description,
            system=skill.body,
            source=skill.source,
            tools=tuple(sorted(skill.tools)),
            model=skill.model or "flash",
        )
        for name, skill in find_skills(workspace, config_dir).items()
        if skill.run_as == "subagent" and skill.body
    }


def agents_index(profiles: dict[str, Profile]) -> str:
    """The text folded into the main session's system prompt: each profile's name and description, sorted ("" for
    none)."""
    if not profiles:
        return ""
    lines = [f"- {p.name}: {p.description}{'' if p.read_only else ' (may change files)'}" for p in profiles.values()]
    return (
        f"{INDEX_HEADING}\n\nSubagents work on a task you describe in their own conversation and answer with a "
        "report. Call the task tool with a profile's name and a self-contained task; several read-only ones "
        "may run at once.\n\n" + "\n".join(lines)
    )
