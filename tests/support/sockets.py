"""Unix sockets for the sandbox tests: a listener, and a probe script that says which paths answer."""

from __future__ import annotations

import socket
from pathlib import Path


def listen(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(8)  # a connect succeeds on the backlog alone: nothing needs to accept
    return server


CONNECT = (
    "import socket, sys\n"
    "for path in sys.argv[1:]:\n"
    "    s = socket.socket(socket.AF_UNIX)\n"
    "    try:\n"
    "        s.connect(path); print('CONNECTED', path)\n"
    "    except OSError as exc:\n"
    "        print('refused', path, exc)\n"
)
