"""A sandbox that plays another program removing a socket (or its folder) while a command starts: right after the
launch listed the host's sockets, before bubblewrap mounts over them."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sessions.sandbox import BubblewrapSandbox, Launch, SandboxMode, SandboxPolicy


@dataclass
class RemovingAfterListing:
    """bubblewrap's sandbox, but its first launch removes ``doomed`` once the launch is built (sockets listed)."""

    inner: BubblewrapSandbox
    doomed: Path
    launches: list[Launch] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def policy(self) -> SandboxPolicy:
        return self.inner.policy

    @property
    def confines(self) -> bool:
        return True

    def with_mode(self, mode: SandboxMode) -> BubblewrapSandbox:
        return self.inner.with_mode(mode)

    def wrap(self, argv: Sequence[str], *, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Launch:
        launch = self.inner.wrap(argv, workspace=workspace, cwd=cwd, env=env)
        if not self.launches:
            if self.doomed.is_dir():
                shutil.rmtree(self.doomed)
            else:
                self.doomed.unlink()
        self.launches.append(launch)
        return launch
