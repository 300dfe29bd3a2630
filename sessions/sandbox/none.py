"""No OS sandbox: the command runs as it is, with the allowlisted environment (``full-access``, or no sandbox here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sessions.sandbox.base import Launch
from sessions.sandbox.env import command_env
from sessions.sandbox.policy import SandboxMode, SandboxPolicy


@dataclass(frozen=True, slots=True)
class NoSandbox:
    policy: SandboxPolicy = field(default_factory=SandboxPolicy)
    base_env: Mapping[str, str] | None = None
    """The parent environment to filter (default ``os.environ``)."""

    @property
    def name(self) -> str:
        return "none"

    @property
    def confines(self) -> bool:
        return False

    def with_mode(self, mode: SandboxMode) -> NoSandbox:
        return replace(self, policy=self.policy.with_mode(mode))

    def wrap(self, argv: Sequence[str], *, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Launch:
        return Launch(argv=tuple(argv), env=command_env(self.policy, env, self.base_env))
