"""Who may talk to the service, and how much they may send. In this order, before any route runs:

1. the ``Host`` must be a loopback name (``127.0.0.1``, ``localhost``, ``[::1]``, any port) or one the user allowed
   (``--allow-host``, and the address bound with ``--allow-remote``), else 421: a page of another site whose name
   was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name as the ``Host`` and is refused;
2. a request whose ``Origin`` is another site's is refused (403), so a page on another site cannot drive the service
   even if it guessed the port; no cookies, no CORS headers;
3. every request carries the access token (``Authorization: Bearer TOKEN``, or ``?token=TOKEN`` for the first page
   load and for ``EventSource``, which cannot set headers), compared in constant time;
4. a body is bounded (:data:`MAX_BODY_BYTES`): a ``Content-Length`` over the bound is refused with 413 before a byte
   of the body is read, and a body without one (chunked) is counted as it arrives and refused once it passes.

This wraps the whole app, so no route can forget it."""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.serve.errors import (
    BodyTooLargeError,
    ForeignOriginError,
    InvalidRequestError,
    MisdirectedHostError,
    ServeError,
    UnauthorizedError,
)

MAX_BODY_BYTES = 1 << 20
"""The largest request body the service reads (1 MiB): an objective or an edited plan is far smaller."""

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


def host_name(header: str) -> str:
    """The name of a ``Host`` header, lower case, without its port (an IPv6 address without its brackets)."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    name, colon, port = value.rpartition(":")
    return name if colon and port.isdigit() else value


def is_loopback_name(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def misdirected_host(scope: Scope, allowed: frozenset[str]) -> str | None:
    """The request's ``Host`` when the service must not answer to it (``None``: a loopback or allowed name)."""
    header = _headers(scope).get("host")
    if header is None:
        return ""
    name = host_name(header)
    return None if is_loopback_name(name) or name in allowed else header


def allowed_names(hosts: Iterable[str]) -> frozenset[str]:
    """``--allow-host`` values (``name`` or ``name:port``) as the names :func:`misdirected_host` compares."""
    return frozenset(host_name(h) for h in hosts if h.strip())


def _declared_length(scope: Scope) -> int | None:
    raw = _headers(scope).get("content-length")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidRequestError(
            f"the Content-Length {raw!r} is not a number", "send the body's length in bytes"
        ) from None


def _too_large(limit: int) -> BodyTooLargeError:
    return BodyTooLargeError(
        f"the request body is over the service's bound of {limit} bytes",
        "send a smaller body: an objective, an edited plan or a budget fits in a few kilobytes",
    )


def bounded_receive(receive: Receive, limit: int) -> Receive:
    """``receive``, counting the body's bytes: past ``limit`` it raises :class:`BodyTooLargeError` (answered as 413
    by the app's error handler), so a body is never held whole beyond the bound."""
    seen = 0

    async def bounded() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _too_large(limit)
        return message

    return bounded


async def _refuse(send: Send, error: ServeError) -> None:
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if error.status == 413:
        headers.append((b"connection", b"close"))  # the unread body is not drained: the connection ends here
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class TokenGuard:
    """ASGI middleware: the host, origin, token and body-size checks in front of every route (the module's docstring
    has the order and why)."""

    def __init__(
        self, app: ASGIApp, token: str, allowed_hosts: Iterable[str] = (), max_body_bytes: int = MAX_BODY_BYTES
    ) -> None:
        self.app = app
        self._token = token.encode()
        self._hosts = allowed_names(allowed_hosts)
        self._max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = misdirected_host(scope, self._hosts)
        if host is not None:
            what = f"the Host {host!r}" if host else "a request without a Host header"
            await _refuse(
                send,
                MisdirectedHostError(
                    f"this service does not answer to {what}: only loopback names (127.0.0.1, localhost, [::1]) and "
                    "names allowed with --allow-host are served, so a page that re-points its own name at this "
                    "machine (DNS rebinding) cannot reach it",
                    "use the URL `reasonix serve` printed (http://127.0.0.1:PORT/); to reach it under another name, "
                    "start it with --allow-host NAME",
                ),
            )
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
        try:
            length = _declared_length(scope)
        except ServeError as exc:
            await _refuse(send, exc)
            return
        if length is not None and length > self._max_body:
            await _refuse(send, _too_large(self._max_body))  # before a byte of the body is read
            return
        await self.app(scope, bounded_receive(receive, self._max_body), send)
