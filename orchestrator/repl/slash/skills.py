"""Skills in ``reasonix code``: ``/skills`` lists them, ``/skill new NAME`` writes a template to
``.reasonix/skills/NAME.md``, and a skill added while a session runs is announced in a ``<skills-update>`` block in
front of the next message (the ``skill`` tool can load it at once; the index has it from the next session on)."""

from __future__ import annotations

from rich.text import Text

from orchestrator.extensions.skills import NAME, SKILL_DIRS, SKILL_TEMPLATE, find_skills
from orchestrator.repl.conversation import Conversation
from sessions.prompt import user_config_dir
from sessions.tools import ToolError
from sessions.tools.gateway import GIT_DIR, GatewayRoot


async def skills_command(conv: Conversation, arg: str) -> bool:
    skills = find_skills(conv.workspace, user_config_dir())
    if not skills:
        conv.say("no skills: /skill new NAME writes a template to .reasonix/skills/NAME.md")
        return True
    for skill in skills.values():
        line = Text(f"  {skill.name}", style="bold")
        line.append(f"  {skill.description}  ")
        line.append(f"({skill.source})", style="dim")
        conv.console.print(line, soft_wrap=True)
    return True


async def skill_command(conv: Conversation, arg: str) -> bool:
    verb, _, name = arg.strip().partition(" ")
    name = name.strip()
    if verb != "new" or not name:
        conv.say("usage: /skill new NAME", "yellow")
        return True
    if not NAME.match(name):
        conv.say(f"/skill new: {name!r} is not a skill name (letters, digits, _ . -)", "red")
        return True
    rel = f"{SKILL_DIRS[0].as_posix()}/{name}.md"
    root = GatewayRoot(conv.workspace, refused=frozenset({GIT_DIR}))  # .reasonix/skills is where skills live
    try:
        if root.stat(rel) is not None or name in find_skills(conv.workspace, user_config_dir()):
            conv.say(f"/skill new: a skill named {name} exists already", "yellow")
            return True
        root.write(rel, SKILL_TEMPLATE.format(name=name).encode("utf-8"))
    except ToolError as exc:
        conv.say(f"/skill new: {exc.message}", "red")
        return True
    conv.say(f"wrote {rel}: fill in its description and steps")
    return True
