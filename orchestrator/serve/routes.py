"""The routes: the JSON API under ``/api`` (documented in ``docs/serve-api.md``), the event stream, and the dashboard's
files (``/`` and ``/static/...``, from ``orchestrator/serve/static/``). Handlers are thin: the manager does the work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from orchestrator.events import GOAL_EVENT_KINDS, SESSION_EVENT_KINDS
from orchestrator.serve.errors import InvalidRequestError, UnknownRunError
from orchestrator.serve.events import COALESCE_S, PING_INTERVAL_S, sse_frames
from orchestrator.serve.manager import GoalManager
from orchestrator.serve.models import (
    SERVICE_EVENT_KINDS,
    EventKinds,
    GoalCreated,
    GoalRequest,
    Ok,
    ResumeRequest,
    ReviewRequest,
    RunList,
    UndoRequest,
    api_schema,
)
from orchestrator.serve.runs import all_runs, run_detail, undo_run

STATIC_DIR = Path(__file__).resolve().parent / "static"
INDEX = "index.html"
M = TypeVar("M", bound=BaseModel)


def _json(model: BaseModel, status: int = 200) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json"), status_code=status)


async def _body(request: Request, model: type[M]) -> M:
    raw = await request.body()
    try:
        data: Any = json.loads(raw) if raw.strip() else {}
        return model.model_validate(data)
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            message = f"{where}: {first['msg']}" if where else str(first["msg"])
        else:
            message = f"the body is not JSON: {exc}"
        raise InvalidRequestError(f"invalid request: {message}", "GET /api/schema describes every body") from None


def _manager(request: Request) -> GoalManager:
    manager: GoalManager = request.app.state.manager
    return manager


def _after(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        raise InvalidRequestError(
            f"Last-Event-ID / after must be an event id (a number), not {raw!r}", "send the last id you received"
        ) from None


# ------------------------------------------------------------------------------------------------ the API


async def schema(request: Request) -> Response:
    return JSONResponse(api_schema())


async def event_kinds(request: Request) -> Response:
    return _json(
        EventKinds(goal=list(GOAL_EVENT_KINDS), session=list(SESSION_EVENT_KINDS), service=list(SERVICE_EVENT_KINDS))
    )


async def list_runs(request: Request) -> Response:
    manager = _manager(request)
    return _json(RunList(runs=all_runs(manager), workspaces=[str(w) for w in manager.workspaces.all()]))


async def start_goal(request: Request) -> Response:
    body = await _body(request, GoalRequest)
    live = _manager(request).start_goal(body)
    created = GoalCreated(run_id=live.run_id, workspace=str(live.workspace), url=f"/api/runs/{live.run_id}")
    return _json(created, 201)


async def get_run(request: Request) -> Response:
    return _json(run_detail(_manager(request), request.path_params["run_id"]))


async def events(request: Request) -> Response:
    manager = _manager(request)
    run_id = request.path_params["run_id"]
    after = _after(request)
    workspace = manager.find(run_id)
    log = manager.event_log(workspace, run_id)
    ping_s: float = getattr(request.app.state, "ping_s", PING_INTERVAL_S)
    coalesce_s: float = getattr(request.app.state, "coalesce_s", COALESCE_S)
    return StreamingResponse(
        sse_frames(log, after, ping_s=ping_s, coalesce_s=coalesce_s),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


async def review(request: Request) -> Response:
    body = await _body(request, ReviewRequest)
    _manager(request).review(request.path_params["run_id"], body)
    return _json(Ok())


async def pause(request: Request) -> Response:
    _manager(request).pause(request.path_params["run_id"])
    return _json(Ok())


async def resume(request: Request) -> Response:
    body = await _body(request, ResumeRequest)
    _manager(request).resume(request.path_params["run_id"], body)
    return _json(Ok())


async def undo(request: Request) -> Response:
    body = await _body(request, UndoRequest)
    return _json(await undo_run(_manager(request), request.path_params["run_id"], body.step))


# ------------------------------------------------------------------------------------------------ the page


def static_file(root: Path, relative: str) -> Path:
    """``relative`` under ``root``, or :class:`UnknownRunError` (404) for a missing file or a path out of it."""
    base = root.resolve()
    target = (base / relative).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        raise UnknownRunError(f"no file {relative!r} here", "the dashboard is at /")
    return target


async def index(request: Request) -> Response:
    root: Path = getattr(request.app.state, "static_dir", STATIC_DIR)
    try:
        page = static_file(root, INDEX)
    except UnknownRunError:
        raise UnknownRunError(
            "the dashboard page is not installed in this copy of Reasonix", "use the API: GET /api/runs"
        ) from None
    return FileResponse(page, headers={"cache-control": "no-store"})


MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
}
"""The page's files by suffix: set here, not guessed from the system's MIME table (which may lack ``.js``)."""


async def static(request: Request) -> Response:
    root: Path = getattr(request.app.state, "static_dir", STATIC_DIR)
    path = static_file(root, request.path_params["path"])
    return FileResponse(
        path,
        media_type=MEDIA_TYPES.get(path.suffix, "application/octet-stream"),
        headers={"cache-control": "no-store", "x-content-type-options": "nosniff"},
    )


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/static/{path:path}", static, methods=["GET"]),
    Route("/api/schema", schema, methods=["GET"]),
    Route("/api/event-kinds", event_kinds, methods=["GET"]),
    Route("/api/runs", list_runs, methods=["GET"]),
    Route("/api/goals", start_goal, methods=["POST"]),
    Route("/api/runs/{run_id}", get_run, methods=["GET"]),
    Route("/api/runs/{run_id}/events", events, methods=["GET"]),
    Route("/api/runs/{run_id}/review", review, methods=["POST"]),
    Route("/api/runs/{run_id}/pause", pause, methods=["POST"]),
    Route("/api/runs/{run_id}/resume", resume, methods=["POST"]),
    Route("/api/runs/{run_id}/undo", undo, methods=["POST"]),
]
