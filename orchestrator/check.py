"""One line of ``reasonix doctor``'s report: what was checked, its status, what was found, and what to do about a
failure or a warning. The command's own checks (``orchestrator.cli.doctor_checks``) and the MCP servers' check
(``orchestrator.mcp.doctor``) both return these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "fail", "skip", "warn"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: tuple[str, ...] = ()
    """What to do about a failure or a warning, one line each."""
    problems: tuple[str, ...] = ()
    """The individual problems behind a failure (each bad key of a configuration file), one line each."""

    @property
    def failed(self) -> bool:
        return self.status == "fail"
