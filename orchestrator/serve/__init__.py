"""``reasonix serve``: the orchestration service. An HTTP API (starlette under hypercorn's trio worker) that starts
goals in workspaces, lists their runs, streams each run's events (server-sent events, resumable with ``Last-Event-ID``),
takes the plan review, pauses, resumes and undoes; it serves the dashboard page too. Every request carries the access
token. The modules: ``app`` (the ASGI app, serving it), ``routes``, ``auth``, ``events`` (the numbered event log and
its fan-out), ``manager`` (the goals the service runs), ``review`` (the review through the API), ``runs`` (what the
API says about runs), ``workspaces`` (the known workspaces), ``models`` (the bodies) and ``errors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.serve.app import create_app, serve_app
    from orchestrator.serve.errors import ServeError
    from orchestrator.serve.events import EventLog
    from orchestrator.serve.manager import GoalManager, open_manager
    from orchestrator.serve.review import ApiReviewer

__all__ = ["ApiReviewer", "EventLog", "GoalManager", "ServeError", "create_app", "open_manager", "serve_app"]

_HOME = {
    "create_app": "app",
    "serve_app": "app",
    "ServeError": "errors",
    "EventLog": "events",
    "GoalManager": "manager",
    "open_manager": "manager",
    "ApiReviewer": "review",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
