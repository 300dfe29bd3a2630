"""``web_fetch``: a URL's page as text (HTML turned into markdown-like text), bounded in bytes, characters and time.

Opt-in (``[tools] web_fetch = true``): a session without it sends the same tool list, byte for byte, as before. The
permission gate governs each call by host (``web(docs.python.org)`` in ``[permissions] allow`` lets it run; every
other host asks, ``deny`` refuses; read-only permissions refuse it), and the tool refuses when the sandbox's network
rule (``[sandbox] network = false``, the default) forbids the network, as it does for commands. A host that is or
resolves to a non-public address (loopback, private, link-local) is fetched only when an allow rule names it
(:mod:`~sessions.tools.web.addresses`). Redirects are followed
within the same host only: another host is another call, which the gate asks about again. The result names the URL
and the media type and never carries a clock, so it is the same bytes whenever it is re-sent.
"""

from __future__ import annotations

import codecs
from urllib.parse import urlsplit

import httpx
import trio
from pydantic import Field, field_validator

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.web.addresses import named_by_rule, non_global_address
from sessions.tools.web.html_text import html_to_text

MAX_BYTES = 2_000_000
"""The most of a body read; the rest is never downloaded."""
TIMEOUT_S = 20.0
"""The whole fetch, redirects included."""
MAX_REDIRECTS = 5
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/javascript")


class WebFetchArgs(ToolArgs):
    url: str = Field(description="An http(s) URL, e.g. https://docs.python.org/3/library/trio.html.")

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL with a host")
        return value.strip()


def host_of(url: str) -> str:
    """The host a ``web(HOST)`` rule is matched against (lower case, without port)."""
    return (urlsplit(url).hostname or "").lower()


class WebFetchTool(Tool[WebFetchArgs]):
    name = "web_fetch"
    description = (
        "Fetch a web page (http/https) and return its text; HTML becomes markdown-like text. For documentation the "
        "user points at. The user approves each host; large pages are cut."
    )
    args_model = WebFetchArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: WebFetchArgs, ctx: ToolContext) -> ToolResult:
        policy = ctx.sandbox.policy
        if not policy.network and policy.mode != "full-access":
            raise ToolInputError(
                "refused: the sandbox's network rule forbids the network ([sandbox] network = false); the user can "
                "set [sandbox] network = true in reasonix.toml to let web_fetch and commands reach it"
            )
        url = args.url
        with trio.move_on_after(TIMEOUT_S):
            await _refuse_private(url, ctx)
            async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT_S) as http:
                for _ in range(MAX_REDIRECTS + 1):
                    try:
                        async with http.stream("GET", url, headers={"Accept": "text/html, text/*;q=0.9"}) as reply:
                            if reply.is_redirect and "location" in reply.headers:
                                target = str(reply.url.join(reply.headers["location"]))
                                if host_of(target) != host_of(args.url):
                                    return ToolResult(
                                        content=f"{url} redirects to another host: {target}; call web_fetch on that "
                                        "URL if it is the page you want (the user approves its host)"
                                    )
                                url = target
                                await _refuse_private(url, ctx)
                                continue
                            return await _read(url, reply, ctx.limits.read_max_chars)
                    except httpx.HTTPError as exc:
                        raise ToolInputError(f"could not fetch {url}: {type(exc).__name__}: {exc}") from exc
                raise ToolInputError(f"{args.url}: more than {MAX_REDIRECTS} redirects; not followed further")
        raise ToolInputError(f"{args.url} did not answer within {TIMEOUT_S:g}s; try again later or another page")


async def _refuse_private(url: str, ctx: ToolContext) -> None:
    parts = urlsplit(url)
    host = host_of(url)
    private = await non_global_address(host, parts.port or (443 if parts.scheme == "https" else 80))
    if private is not None and not named_by_rule(host, ctx.gate):
        raise ToolInputError(
            f"refused: {host} is a non-public address ({private}); web_fetch reaches loopback, private and "
            f"link-local addresses only for a host an allow rule names: the user can add web({host}) to "
            "[permissions] allow"
        )


def text_codec(declared: str | None) -> str:
    """The codec a page's declared charset names, when it is one that turns bytes into text; UTF-8 otherwise (an
    unknown name, or ``rot13``/``base64``/``zlib``, which ``bytes.decode`` refuses with a LookupError)."""
    try:
        info = codecs.lookup(declared or "utf-8")
    except LookupError:
        return "utf-8"
    return info.name if getattr(info, "_is_text_encoding", True) else "utf-8"


async def _read(url: str, reply: httpx.Response, max_chars: int) -> ToolResult:
    media = reply.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if reply.status_code >= 400:
        raise ToolInputError(f"{url} answered HTTP {reply.status_code}; check the URL")
    if media and not media.startswith(_TEXT_TYPES):
        raise ToolInputError(f"{url} is {media}, not text; web_fetch reads text and HTML pages only")
    body = bytearray()
    cut = False
    async for chunk in reply.aiter_bytes():
        body += chunk
        if len(body) > MAX_BYTES:
            del body[MAX_BYTES:]
            cut = True
            break
    text = body.decode(text_codec(reply.encoding), "replace")
    if media in ("text/html", "application/xhtml+xml") or (not media and "<html" in text[:1000].lower()):
        text = html_to_text(text, url)
    head = f"{url} ({media or 'no content-type'})\n\n"
    if len(text) > max_chars - len(head):
        text = text[: max_chars - len(head) - 80] + f"\n[cut: the page has {len(text):,} characters; shown the first]"
    elif cut:
        text += f"\n[cut: only the first {MAX_BYTES:,} bytes were read]"
    return ToolResult(content=head + text)
