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


def _read(path: Path, default_name: str, label: str) -> Skill | None:
    try:
        if path.stat().st_size > MAX_SKILL_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
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


def _candidates(directory: Path) -> list[tuple[Path, str]]:
    if not directory.is_dir():
        return []
    found = [(p, p.stem) for p in sorted(directory.glob("*.md")) if p.is_file()]
    found += [(p, p.parent.name) for p in sorted(directory.glob("*/SKILL.md")) if p.is_file()]
    return sorted(found, key=lambda item: item[1])


def find_skills(workspace: Path, config_dir: Path | None = None) -> dict[str, Skill]:
    """Every skill by name, sorted by name."""
    roots: list[tuple[Path, str]] = [(workspace / d, str(d)) for d in SKILL_DIRS]
    if config_dir is not None:
        roots.append((config_dir / "skills", "~config/skills"))
    skills: dict[str, Skill] = {}
    for directory, label in roots:
        for path, default in _candidates(directory):
            skill = _read(path, default, f"{label}/{path.relative_to(directory).as_posix()}")
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
