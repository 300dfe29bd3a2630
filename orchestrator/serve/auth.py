"""Who may talk to the service: every request carries the access token (``Authorization: Bearer TOKEN``, or
``?token=TOKEN`` for the first page load and for ``EventSource``, which cannot set headers), compared in constant time.
No cookies, no CORS headers; a request whose ``Origin`` is another site's is refused (403), so a page on another site
cannot drive the service even if it guessed the port. This wraps the whole app, so no route can forget it."""

from __future__ import annotations

import hmac
import json
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from orchestrator.serve.errors import ForeignOriginError, ServeError, UnauthorizedError

TOKEN_HINT = (
    "send the token that `reasonix serve` printed with its URL: the header 'Authorization: Bearer TOKEN', "
    "or ?token=TOKEN in the URL"
)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def presented_token(scope: Scope) -> str | None:
    """The token of a request: the bearer header first, else the ``token`` query parameter."""
    auth = _headers(scope).get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0] if values else None


def foreign_origin(scope: Scope) -> str | None:
    """The request's ``Origin`` when it is not this server's own (``None``: no Origin, or the same one)."""
    headers = _headers(scope)
    origin = headers.get("origin")
    if origin is None:
        return None
    host = headers.get("host", "").lower()
    netloc = urlsplit(origin).netloc.lower() if origin != "null" else ""
    return None if netloc and netloc == host else origin


async def _refuse(send: Send, error: ServeError) -> None:
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class TokenGuard:
    """ASGI middleware: the origin check and the token check in front of every route."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        origin = foreign_origin(scope)
        if origin is not None:
            await _refuse(
                send,
                ForeignOriginError(
                    f"requests from another site ({origin}) are refused",
                    "open the dashboard from the URL `reasonix serve` printed; the API takes no cross-site requests",
                ),
            )
            return
        token = presented_token(scope)
        if token is None or not hmac.compare_digest(token.encode(), self._token):
            what = "no access token" if token is None else "a wrong access token"
            await _refuse(send, UnauthorizedError(f"{what}: every request needs the service's token", TOKEN_HINT))
            return
        await self.app(scope, receive, send)
