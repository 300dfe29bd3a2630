"""Skills: Markdown files a model loads when it needs them. Found in ``.reasonix/skills/`` (``NAME.md`` or
``NAME/SKILL.md``), Claude Code's ``.claude/skills/NAME/SKILL.md`` and the user's config directory
(``~/.config/reasonix/skills/``); the first one of a name wins, in that order.

Front matter: ``name`` (default: the file's or folder's name), ``description`` (what it is for, one line; default:
the body's first line), and optionally ``run_as = inline | subagent``, ``model``, ``tools``. Only the index (each
name and description, sorted by name) is folded into the system prompt, once, when a session starts
(:func:`skills_index`); the body is what the ``skill`` tool returns, a tool result. With no skills anywhere there is no
index and no tool: the bytes sent are as before. A skill is text for the model and runs no program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.extensions.front_matter import parse_front_matter, text_of
from sessions.tools.gateway import GIT_DIR, GatewayRoot

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_SKILL_BYTES = 128 * 1024
SKILL_DIRS = (Path(".reasonix") / "skills", Path(".claude") / "skills")
INDEX_HEADING = "# Skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    source: str
    """Where it was found: a path relative to the workspace, or ``~config/skills/…``."""
    run_as: str = "inline"
    model: str = ""
    tools: tuple[str, ...] = ()


def _read(root: GatewayRoot, rel: str, default_name: str, label: str) -> Skill | None:
    found = root.try_read(rel, limit=MAX_SKILL_BYTES)
    if found is None or found.truncated:
        return None
    text = found.data.decode("utf-8", errors="replace")
    meta, body = parse_front_matter(text)
    name = text_of(meta, "name") or default_name
    if not NAME.match(name):
        return None
    first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    tools = meta.get("tools", [])
    return Skill(
        name=name,
        description=" ".join((text_of(meta, "description") or first).split())[:300],
        body=body.strip(),
        source=label,
        run_as="subagent" if text_of(meta, "run_as") == "subagent" else "inline",
        model=text_of(meta, "model"),
        tools=tuple(tools) if isinstance(tools, list) else tuple(t.strip() for t in tools.split(",") if t.strip()),
    )


def _candidates(root: GatewayRoot, directory: str) -> list[tuple[str, str]]:
    """``(path inside the directory, default name)``: ``NAME.md`` and ``NAME/SKILL.md``, sorted by name."""
    found: list[tuple[str, str]] = []
    for entry in root.names(directory):
        if entry.endswith(".md"):
            found.append((entry, entry[: -len(".md")]))
        elif "SKILL.md" in root.names(f"{directory}/{entry}"):
            found.append((f"{entry}/SKILL.md", entry))
    return sorted(found, key=lambda item: item[1])


def find_skills(workspace: Path, config_dir: Path | None = None) -> dict[str, Skill]:
    """Every skill by name, sorted by name. Read through the gateway: a skill file that is a symlink out of the
    workspace (or of the config directory), a FIFO or a device is no skill."""
    workspace_root = GatewayRoot(workspace, refused=frozenset({GIT_DIR}))
    roots: list[tuple[GatewayRoot, str, str]] = [(workspace_root, d.as_posix(), d.as_posix()) for d in SKILL_DIRS]
    if config_dir is not None:
        config_root = GatewayRoot(config_dir, refused=frozenset({GIT_DIR}), what="the config directory")
        roots.append((config_root, "skills", "~config/skills"))
    skills: dict[str, Skill] = {}
    for root, directory, label in roots:
        for inside, default in _candidates(root, directory):
            skill = _read(root, f"{directory}/{inside}", default, f"{label}/{inside}")
            if skill is not None and skill.name not in skills:
                skills[skill.name] = skill
    return dict(sorted(skills.items()))


def skills_index(skills: dict[str, Skill]) -> str:
    """The text folded into the system prompt: each skill's name and description, sorted ("" for none)."""
    if not skills:
        return ""
    lines = [f"- {s.name}: {s.description}" for s in skills.values()]
    return (
        f"{INDEX_HEADING}\n\nSkills are instructions kept for particular tasks. When a task matches one, call the "
        "skill tool with its name to read it before you start.\n\n" + "\n".join(lines)
    )


SKILL_TEMPLATE = """---
name: {name}
description: One line: what this skill is for, so the model knows when to load it
---
# {name}

Steps, conventions and commands the model should follow when it uses this skill.
"""
