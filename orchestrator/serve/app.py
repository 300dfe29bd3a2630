"""The ASGI app (starlette) and serving it under hypercorn's trio worker: :func:`create_app` wires the routes, the
token guard and the error handlers around a :class:`~orchestrator.serve.manager.GoalManager`; :func:`serve_app` binds
and serves it until its shutdown trigger fires."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from orchestrator.serve.auth import MAX_BODY_BYTES, TokenGuard
from orchestrator.serve.errors import RemoteBindError, ServeError
from orchestrator.serve.events import COALESCE_S, PING_INTERVAL_S
from orchestrator.serve.manager import GoalManager
from orchestrator.serve.routes import ROUTES, STATIC_DIR


async def _serve_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServeError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    hint = "GET /api/schema and docs/serve-api.md list the routes" if exc.status_code in (404, 405) else ""
    return JSONResponse({"error": str(exc.detail), "hint": hint}, status_code=exc.status_code, headers=exc.headers)


def create_app(
    manager: GoalManager,
    token: str,
    *,
    static_dir: Path = STATIC_DIR,
    ping_s: float = PING_INTERVAL_S,
    coalesce_s: float = COALESCE_S,
    allowed_hosts: Iterable[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The app; ``allowed_hosts``: the ``Host`` names served besides loopback ones (:mod:`orchestrator.serve.auth`);
    ``coalesce_s``: how long a live stream gathers events into one write (:mod:`orchestrator.serve.events`)."""
    app = Starlette(
        routes=ROUTES,
        middleware=[
            Middleware(TokenGuard, token=token, allowed_hosts=tuple(allowed_hosts), max_body_bytes=max_body_bytes)
        ],
        exception_handlers={ServeError: _serve_error, HTTPException: _http_error},
    )
    app.state.manager = manager
    app.state.static_dir = static_dir
    app.state.ping_s = ping_s
    app.state.coalesce_s = coalesce_s
    return app


REMOTE_RISK = (
    "binding to {host} exposes the service beyond this machine: anyone who can reach the port and learns the token "
    "(it travels unencrypted over plain HTTP) can run commands in your workspaces"
)


def check_bind(host: str, *, allow_remote: bool) -> None:
    """:class:`RemoteBindError` for a non-loopback ``host`` unless the user allowed it, saying why it is risky."""
    if not is_loopback(host) and not allow_remote:
        raise RemoteBindError(
            REMOTE_RISK.format(host=host),
            "bind to 127.0.0.1 and reach it through an SSH tunnel, or pass --allow-remote if you accept the risk",
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_app(
    app: Starlette,
    host: str,
    port: int,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` (0: any free port); ``task_status.started`` gets the bound base URL."""
    from hypercorn.config import Config
    from hypercorn.trio.run import worker_serve
    from hypercorn.utils import wrap_app

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 2.0
    sockets = config.create_sockets()  # here, so that a port in use is a plain OSError for the caller
    for sock in sockets.insecure_sockets:
        sock.listen(config.backlog)
    asgi: Any = app  # hypercorn's ASGI typing is narrower than starlette's, for the same protocol
    serve = partial(
        worker_serve,
        wrap_app(asgi, config.wsgi_max_body_size, None),
        config,
        sockets=sockets,
        shutdown_trigger=shutdown_trigger,
    )
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(serve)
        task_status.started(binds[0])
