"""Goals that run unattended (``reasonix goal --unattended``, ``[goal] unattended``): nothing is asked, DeepSeek's
outages are waited out with a growing backoff (:mod:`orchestrator.policy.outage`) up to a maximum runtime, and the run
ends in exactly one terminal state with a summary file and, if asked, a notification command.

:class:`UnattendedRun` (:mod:`~orchestrator.unattended.loop`) bounds the run by its runtime;
:mod:`~orchestrator.unattended.report` writes ``summary.md`` and runs ``--notify-cmd``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.unattended.loop import UnattendedRun
    from orchestrator.unattended.report import notify, summary_markdown, write_summary

__all__ = ["UnattendedRun", "notify", "summary_markdown", "write_summary"]

_HOME = {"UnattendedRun": "loop", "notify": "report", "summary_markdown": "report", "write_summary": "report"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
