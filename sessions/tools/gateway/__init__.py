"""The gateway: the one way host-side code touches content beneath a root someone else can write.

The model's reach is the sandbox's reach: what a file tool, a skill, an agent profile, a memory file or a kept output
reads or writes on the host goes through :class:`GatewayRoot`, which opens the root once and walks beneath it one
component at a time without following a symlink by name (a symlink is read and resolved by the walk itself, and only
while it stays beneath the root), refuses ``.git`` and ``.reasonix`` at any depth, reads regular files only and only as
many bytes as asked, and writes through a temporary file renamed into place within the directory it holds. Nothing
else in the code opens a workspace path by name (``tests/sessions/tools/test_gateway_only.py`` checks).
"""

from sessions.tools.gateway.names import GIT_DIR, KEPT_OUTPUTS, RESERVED, STATE_DIR, ReservedPathError
from sessions.tools.gateway.root import GatewayRoot, Located, Read

__all__ = [
    "GIT_DIR",
    "KEPT_OUTPUTS",
    "RESERVED",
    "STATE_DIR",
    "GatewayRoot",
    "Located",
    "Read",
    "ReservedPathError",
]
