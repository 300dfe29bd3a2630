"""The frozen prefix of a session: system prompt + canonical tool schemas + standing memory (DESIGN §3.1).

Assembled once, serialized once, fingerprinted, never touched again. There is deliberately no way to change a
``Prefix``: a session that needs another prefix is another session.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from sessions.prompt.memory import StandingMemory
from sessions.wire.messages import SystemMessage, ToolSchema, encode_message, encode_tools


@dataclass(frozen=True, slots=True)
class Prefix:
    system: SystemMessage
    tools: tuple[ToolSchema, ...]
    system_bytes: bytes = field(repr=False)
    tools_bytes: bytes = field(repr=False)
    system_hash: str
    tools_hash: str

    @property
    def fingerprint(self) -> str:
        """A short id of the whole prefix (system + tools)."""
        return hashlib.sha256((self.system_hash + self.tools_hash).encode()).hexdigest()[:16]


def prefix_hash(data: bytes) -> str:
    """The short hash used in prefix fingerprints."""
    return hashlib.sha256(data).hexdigest()[:16]


def build_prefix(system_prompt: str, tools: Sequence[ToolSchema], memory: StandingMemory | None = None) -> Prefix:
    """Fold memory into the system prompt, canonicalize the tools, encode both once."""
    text = system_prompt.rstrip()
    if memory is not None and memory.files:
        text += "\n\n# Standing memory (project instructions)\n\n" + memory.render()
    system = SystemMessage(content=text)
    canonical = tuple(sorted(tools, key=lambda t: t.function.name))
    names = [t.function.name for t in canonical]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate tool names in the prefix: {names}")
    system_bytes = encode_message(system)
    tools_bytes = encode_tools(canonical)
    return Prefix(
        system=system,
        tools=canonical,
        system_bytes=system_bytes,
        tools_bytes=tools_bytes,
        system_hash=prefix_hash(system_bytes),
        tools_hash=prefix_hash(tools_bytes),
    )
