"""What a sandboxed command may see and do: the mode, network, hidden paths, extra writable paths, environment names.

Modes (``--sandbox`` / ``[sandbox] mode``):

* ``workspace-write``: the whole filesystem read-only, the workspace (and the extra ``writable`` paths) writable, a
  private ``/tmp``; the default when a sandbox is available;
* ``read-only``: the workspace read-only too (the planner and ``run --read-only`` may then run bash to read);
* ``full-access``: no sandbox at all; only when the user asks for it explicitly.

Bounds (``tmp_mb``, ``max_processes``, ``memory_mb``) hold in both sandboxed modes; a command that hits one is told
which (:mod:`sessions.sandbox.bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

SandboxMode = Literal["workspace-write", "read-only", "full-access"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("workspace-write", "read-only", "full-access")

#: The variables every command gets (when set); ``[sandbox] env`` adds names, nothing else passes. Besides the seven
#: that name the user, the shell and the terminal: the locale, the time zone, and how Python and colour behave, which
#: change what tests print but carry nothing secret.
BASE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "TERM",
    "USER",
    "SHELL",
    "TMPDIR",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "NO_COLOR",
    "COLORTERM",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "VIRTUAL_ENV",
)

#: Credentials and configuration a command never needs to read.
DEFAULT_FORBID_READ: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/reasonix",
    "~/.config/gh",
    "~/.config/gcloud",
    "~/.azure",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.npmrc",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.config/git/credentials",
    "~/.config/hub",
    "~/.config/op",
    "~/.config/rclone",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.terraform.d",
    "~/.mozilla",
    "~/.config/chromium",
    "~/.config/google-chrome",
)

#: Always hidden, whatever ``forbid_read`` says: the system's password hashes and the user's shell and REPL
#: histories (typed passwords and tokens end up there).
ALWAYS_HIDDEN: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.histfile",
    "~/.sh_history",
    "~/.history",
    "~/.local/share/fish",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.rediscli_history",
    "~/.lesshst",
    "~/.viminfo",
    "~/.wget-hsts",
)

#: Default bounds of one command (``[sandbox] tmp_mb / max_processes / memory_mb``; 0 turns one off).
DEFAULT_TMP_MB = 512
DEFAULT_MAX_PROCESSES = 512
DEFAULT_MEMORY_MB = 4096


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    mode: SandboxMode = "workspace-write"
    network: bool = False
    forbid_read: tuple[str, ...] = DEFAULT_FORBID_READ
    """Paths (``~`` expands to the user's home) hidden from commands: an empty directory or an empty file."""
    writable: tuple[Path, ...] = ()
    """Paths writable besides the workspace (workspace-write mode only)."""
    env: tuple[str, ...] = ()
    """Environment variables passed besides :data:`BASE_ENV`."""
    secret_env: tuple[str, ...] = ("DEEPSEEK_API_KEY",)
    """Variables never passed, whatever ``env`` says: the one ``api_key_env`` names belongs here."""
    tmp_mb: int = DEFAULT_TMP_MB
    """The size of the private ``/tmp`` (0: as large as the kernel allows)."""
    max_processes: int = DEFAULT_MAX_PROCESSES
    """Processes and threads a command may have at once (0: no bound)."""
    memory_mb: int = DEFAULT_MEMORY_MB
    """The memory (heap and private mappings) each of a command's processes may allocate (0: no bound)."""
    readable: tuple[Path, ...] = ()
    """Paths under ``/tmp`` that stay visible, read-only, behind the private ``/tmp`` (an MCP server's own files);
    the Python environment Reasonix runs in always does."""

    def with_mode(self, mode: SandboxMode) -> SandboxPolicy:
        return replace(self, mode=mode)
