"""What a conversation says besides its turns: the frozen prefix (system prompt, tool schemas and standing
memory, encoded once, DESIGN §3.1), the standing-memory files it folds in, and the tail blocks that carry state which
changes mid-session in front of the newest user message (DESIGN §3.3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.prompt.memory import StandingMemory, load_standing_memory, user_config_dir
    from sessions.prompt.prefix import Prefix, build_prefix
    from sessions.prompt.tail import TailBlock, compose_user_turn

__all__ = [
    "Prefix",
    "StandingMemory",
    "TailBlock",
    "build_prefix",
    "compose_user_turn",
    "load_standing_memory",
    "user_config_dir",
]

_HOME = {
    "Prefix": "prefix",
    "StandingMemory": "memory",
    "TailBlock": "tail",
    "build_prefix": "prefix",
    "compose_user_turn": "tail",
    "load_standing_memory": "memory",
    "user_config_dir": "memory",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
