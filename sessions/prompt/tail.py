"""Tail blocks: state that changes mid-session rides in front of the newest user message (DESIGN §3.3).

A block is tagged text, e.g. ``<active-goal>…</active-goal>``. Once a user message has been sent with its blocks, it
is part of the log like any other message and is re-sent unchanged; new state goes in front of the next user message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, field_validator

_TAG = re.compile(r"^[a-z][a-z0-9-]*$")


class TailBlock(BaseModel):
    model_config = ConfigDict(frozen=True)
    tag: str
    body: str

    @field_validator("tag")
    @classmethod
    def _valid_tag(cls, tag: str) -> str:
        if not _TAG.match(tag):
            raise ValueError(f"tail block tag {tag!r} must be lowercase letters, digits and dashes")
        return tag

    def render(self) -> str:
        return f"<{self.tag}>\n{self.body.strip()}\n</{self.tag}>"


def compose_user_turn(text: str, blocks: Sequence[TailBlock] = ()) -> str:
    """The content of a user message: the tail blocks in the order given, then the user's text."""
    if not blocks:
        return text
    return "\n\n".join([*(b.render() for b in blocks), text])
