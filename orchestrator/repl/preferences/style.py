"""Reply language and output styles of ``reasonix code`` and ``reasonix chat``, each where the cache wants it.

* **Language** (``[conversation] language``, ``/language``) changes mid-conversation: it rides as a ``<language>``
  tail block in front of the next user message (DESIGN §3.3), sent when it differs from what the model last heard, so
  every earlier byte is re-sent unchanged. It is never part of the prefix.
* **Output style** (``[conversation] style``, ``/style``) is a named text folded into the system prompt once, when
  the session starts. A prefix never changes (DESIGN §3.1): another style is another session, and ``/style`` says so.
  With no style configured the system prompt is byte for byte the one without this feature.
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.errors import ReasonixError
from sessions.prompt import TailBlock

BUILTIN_STYLES: dict[str, str] = {
    "concise": "Be brief: lead with the answer or the change, skip preamble and recaps, use short lists over prose.",
    "explanatory": "Explain as you go: say why you chose an approach, name the trade-offs, and point out what the "
    "user might learn from the code you read or write.",
}
STYLE_HEADING = "\n\n# Output style\n\n"


class StyleError(ReasonixError):
    """The user is at fault: an output style that is neither built in nor under ``[conversation.styles]``."""


def styles_of(custom: Mapping[str, str]) -> dict[str, str]:
    """Every style by name: the built-in ones, and the user's (which win on a shared name)."""
    return {**BUILTIN_STYLES, **custom}


def style_text(name: str, custom: Mapping[str, str]) -> str:
    known = styles_of(custom)
    if name not in known:
        raise StyleError(
            f"no output style {name!r}: choose one of {', '.join(sorted(known))}, or define it under "
            f"[conversation.styles] in reasonix.toml"
        )
    return known[name]


def styled(system_prompt: str, name: str | None, custom: Mapping[str, str]) -> str:
    """``system_prompt`` with the style ``name`` folded in; unchanged when ``name`` is ``None``."""
    if name is None:
        return system_prompt
    return system_prompt.rstrip() + STYLE_HEADING + style_text(name, custom).strip()


def language_block(language: str) -> TailBlock:
    """The tail block that sets the language of replies and reasoning."""
    return TailBlock(
        tag="language",
        body=f"Write your replies and your reasoning in {language}, whatever language earlier messages used. "
        f"Code, identifiers and commands stay as they are.",
    )
