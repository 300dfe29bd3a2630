"""The DeepSeek client: httpx under Trio, streaming by default, retries with tenacity, deadline and stall timeouts.

How one request runs:

* We refuse to send what DeepSeek is known to reject (:func:`check_request`), then send the body: the caller's exact
  pre-encoded bytes when given (the session joins stored message bytes; they go out unchanged), else
  :func:`~sessions.wire.messages.encode_request`.
* Each attempt runs under the per-request deadline (``deadline_s``, a Trio cancel scope around the attempt) and a stall
  timer that only real data resets: a ``data:`` line (or, on the JSON path, a non-blank byte). ``: keep-alive``
  comments and the JSON path's blank keep-alive lines do not reset it. Only the server's time counts: while the
  reader waits for the caller to take events, both timers are paused.
* A whole reply (finish reason and usage) is kept even if ``[DONE]`` never comes. A reply passing ``max_reply_chars``
  raises ReplyTooLargeError; a 200 that is no event stream (an HTML page) UnexpectedBodyError. Neither is retried.
* 429 / 500 / 503 / other 5xx, connection failures, stalls and streams that break before their finish reason are
  retried as a whole request with exponential backoff and jitter, honouring ``Retry-After``; backoff sleeps on the
  Trio clock. Before a retry the caller receives :class:`~sessions.wire.stream.StreamRestarted`: what it showed is void.
  A half reply is never surfaced as complete: :class:`~sessions.wire.stream.Completed` comes only from a whole reply.
  400 / 401 / 402 / 422, refusals, protocol errors and the deadline are never retried.
* ``async with client.stream(...) as events`` reads in a background task of its own nursery: breaking out early or
  being cancelled cancels that task, which closes the response and its connection.
* :meth:`DeepSeekClient.balance` is ``GET /user/balance``.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from types import TracebackType

import httpx
import trio
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import AsyncRetrying, RetryError, retry_if_exception, stop_after_attempt

from sessions.wire.answers import ERROR_BODY_LIMIT, describe_body, media_type, parse_retry_after, server_message
from sessions.wire.balance import Balance, fetch_balance
from sessions.wire.channel import Outcome, ReplyEvents
from sessions.wire.errors import (
    ConnectionFailedError,
    DeadlineExceededError,
    DeepSeekError,
    ProtocolError,
    ReplyTooLargeError,
    RequestRefusedError,
    ResourcesExhaustedError,
    RetriesExhaustedError,
    StallTimeoutError,
    StreamBrokenError,
    UnexpectedBodyError,
    error_for_status,
)
from sessions.wire.messages import ChatCompletion, ChatRequest, encode_request
from sessions.wire.provider import DEEPSEEK, Provider, Routes
from sessions.wire.retry_wait import RetryWait
from sessions.wire.sse import SseComment, SseData, SseParser
from sessions.wire.stream import (
    KEEP_ALIVE,
    Completed,
    Reply,
    StreamAssembler,
    StreamEvent,
    StreamRestarted,
    decode_chunk,
    events_of_reply,
    reply_chars,
    reply_from_completion,
)
from sessions.wire.timers import DRAIN_GRACE_S, Emit, Timers, drain, read_head

DEFAULT_USER_AGENT = "reasonix/0.1 (+https://github.com/reasonix)"


class ClientSettings(BaseModel):
    """How patient the client is. Config (reasonix.toml) fills these in."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    deadline_s: float = Field(default=600, gt=0)
    """Per attempt: the whole request, from sending to the last byte."""
    stall_timeout_s: float = Field(default=120, gt=0)
    """Longest silence without real data (keep-alives do not count)."""
    connect_timeout_s: float = Field(default=30, gt=0)
    max_attempts: int = Field(default=4, ge=1)
    backoff_initial_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30, ge=0)
    backoff_jitter_s: float = Field(default=1.0, ge=0)
    max_reply_chars: int = Field(default=4_000_000, ge=1)
    """The largest reply accepted: content, reasoning and tool-call arguments together (about a million tokens)."""
    retry_after_max_s: float = Field(default=300, gt=0)
    """The longest ``Retry-After`` honoured: a server asking for more is retried after this long instead."""
    user_agent: str = DEFAULT_USER_AGENT
    api_key_env: str = "DEEPSEEK_API_KEY"
    """Named in the 401 message, so it tells the user which variable to set."""


def check_request(request: ChatRequest) -> None:
    """Raise :class:`RequestRefusedError` for a request DeepSeek is known to reject (DESIGN §4)."""
    choice = request.tool_choice
    if request.thinking_enabled and (choice == "required" or isinstance(choice, dict)):
        shown = "a named function" if isinstance(choice, dict) else '"required"'
        raise RequestRefusedError(
            f"refusing to send tool_choice {shown} with thinking mode on: DeepSeek rejects it with HTTP 400. "
            f'Use tool_choice "auto" (or none), or disable thinking for this session.'
        )


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, DeepSeekError) and exc.retryable


class DeepSeekClient(Routes):
    """One HTTP connection pool to a DeepSeek-compatible endpoint (or, by its provider, an OpenAI-compatible one)."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        settings: ClientSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        rng: random.Random | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.provider = provider or DEEPSEEK
        self._routes = {}
        self.settings = settings or ClientSettings()
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        headers = {"User-Agent": self.settings.user_agent, "Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        timeout = httpx.Timeout(
            connect=self.settings.connect_timeout_s, read=None, write=None, pool=self.settings.connect_timeout_s
        )
        self._http = httpx.AsyncClient(headers=headers, timeout=timeout, transport=transport)
        self._backoff = RetryWait(self.settings, rng or random.Random())

    async def aclose(self) -> None:
        await self.close_routes()
        await self._http.aclose()

    async def __aenter__(self) -> DeepSeekClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # ----------------------------------------------------------------------------------------------- public API

    @contextlib.asynccontextmanager
    async def stream(
        self, request: ChatRequest, *, body: bytes | None = None
    ) -> AsyncGenerator[AsyncIterator[StreamEvent], None]:
        """Events of one request, retries included, ending with :class:`Completed` (or raising a DeepSeekError)."""
        routed = self._routes.get(request.model)
        if routed is not None:
            async with routed.stream(request, body=body) as events:
                yield events
            return
        check_request(request)
        payload = body if body is not None else encode_request(request)
        send, receive = trio.open_memory_channel[list[StreamEvent]](16)
        outcome = Outcome()
        flattened: BaseException | None = None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._produce, request.stream, payload, send, outcome)
                try:
                    yield ReplyEvents(receive, outcome)
                finally:
                    nursery.cancel_scope.cancel()  # the reader stops; leaving its scope closes the response
        except BaseExceptionGroup as group:
            # The nursery wraps whatever the caller's block raised; give the caller its own exception back.
            if len(group.exceptions) != 1:
                raise
            flattened = group.exceptions[0]
        if flattened is not None:
            raise flattened

    async def complete(
        self,
        request: ChatRequest,
        *,
        body: bytes | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Reply:
        """The whole reply of one request (streamed or not), retries included."""
        reply: Reply | None = None
        async with self.stream(request, body=body) as events:
            async for event in events:
                if on_event is not None:
                    on_event(event)
                if isinstance(event, Completed):
                    reply = event.reply
        if reply is None:  # pragma: no cover - the producer always ends with Completed or an error
            raise StreamBrokenError("the request ended without a reply")
        return reply

    async def balance(self, timeout_s: float = 10) -> Balance:
        """The account balance (:mod:`sessions.wire.balance`): one bounded request, not retried."""
        key_env, name = self.settings.api_key_env, self.provider.name
        return await fetch_balance(self._http, self.base_url, key_env=key_env, timeout_s=timeout_s, provider=name)

    # -------------------------------------------------------------------------------------------------- retries

    async def _produce(
        self, streamed: bool, payload: bytes, send: trio.MemorySendChannel[list[StreamEvent]], outcome: Outcome
    ) -> None:
        finished = False
        async with send:
            try:
                await self._run(streamed, payload, send.send)
                finished = True
            except DeepSeekError as exc:
                outcome.error = exc
                finished = True
            finally:
                outcome.crashed = not finished

    async def _run(self, streamed: bool, payload: bytes, emit: Emit) -> None:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.max_attempts),
            wait=self._backoff,
            retry=retry_if_exception(_is_retryable),
            sleep=trio.sleep,
        )
        delivered = [0]
        last_error: DeepSeekError | None = None

        async def counted(events: list[StreamEvent]) -> None:
            delivered[0] += sum(event is not KEEP_ALIVE for event in events)
            await emit(events)

        try:
            async for attempt in retrying:
                number = attempt.retry_state.attempt_number
                if number > 1 and last_error is not None:
                    await emit(
                        [StreamRestarted(attempt=number, reason=last_error.message, discarded_events=delivered[0])]
                    )
                    delivered[0] = 0
                failure: DeepSeekError | None = None
                reply: Reply | None = None
                try:
                    whole = await self._attempt(streamed, payload, counted)
                    if whole.finish_reason == "insufficient_system_resource":
                        raise ResourcesExhaustedError(
                            f"{self.provider.name} cut the reply short for lack of server capacity "
                            "(finish_reason insufficient_system_resource)"
                        )
                    reply = whole
                except DeepSeekError as exc:  # only our errors enter tenacity; Cancelled passes straight through
                    failure = last_error = exc
                with attempt:
                    if failure is not None:
                        raise failure
                if reply is not None:
                    await emit([Completed(reply=reply)])
        except RetryError as exc:
            last = exc.last_attempt.exception()
            assert isinstance(last, DeepSeekError)
            raise RetriesExhaustedError(last, exc.last_attempt.attempt_number, provider=self.provider.name) from last

    async def _attempt(self, streamed: bool, payload: bytes, emit: Emit) -> Reply:
        s = self.settings
        with trio.move_on_after(s.deadline_s) as deadline_scope:
            with trio.CancelScope(deadline=trio.current_time() + s.stall_timeout_s) as stall_scope:
                timers = Timers(deadline_scope, stall_scope, s.stall_timeout_s)
                try:
                    if streamed:
                        return await self._stream_once(payload, emit, timers)
                    return await self._json_once(payload, emit, timers)
                except httpx.TransportError as exc:
                    raise ConnectionFailedError(
                        f"could not reach {self.provider.name} at {self.base_url} ({type(exc).__name__}: {exc}). "
                        f"Check the network and base_url."
                    ) from exc
            raise StallTimeoutError(
                f"no data from {self.provider.name} for {s.stall_timeout_s:g}s (keep-alives do not count)"
            )
        assert deadline_scope.cancelled_caught
        raise DeadlineExceededError(
            f"the request took longer than its deadline of {s.deadline_s:g}s and was abandoned; raise "
            f"request deadline in reasonix.toml if replies this long are expected."
        )

    # ---------------------------------------------------------------------------------------------- one attempt

    async def _raise_for_status(self, response: httpx.Response) -> None:
        if response.status_code == 200:
            return
        body = b""
        async for part in response.aiter_bytes():
            body += part
            if len(body) >= ERROR_BODY_LIMIT:
                break
        raise error_for_status(
            response.status_code,
            server_message(body),
            retry_after=parse_retry_after(response.headers.get("retry-after")),
            key_env=self.settings.api_key_env,
            provider=self.provider.name,
        )

    def _not_an_answer(self, expected: str, media: str, body: bytes) -> UnexpectedBodyError:
        labelled = f"content-type {media}" if media else "no content-type"
        if media in ("text/event-stream", "application/json"):
            labelled += ", but the body is not"
        return UnexpectedBodyError(
            f"the answer from {self.url} is not {expected} ({labelled}: {describe_body(body)}). A wrong base_url, "
            f"a proxy or a captive portal answers like this: check base_url in reasonix.toml or DEEPSEEK_BASE_URL, "
            f"and that the network reaches the API. Not retried."
        )

    async def _stream_once(self, payload: bytes, emit: Emit, timers: Timers) -> Reply:
        limit = self.settings.max_reply_chars
        assembler = StreamAssembler(max_chars=limit)
        parser = SseParser(max_line_bytes=6 * limit + ERROR_BODY_LIMIT)  # a character is at most 6 bytes of JSON
        done = False
        headers = {"Accept": "text/event-stream"}
        async with self._http.stream("POST", self.url, content=payload, headers=headers) as response:
            await self._raise_for_status(response)
            chunks = response.aiter_bytes()
            media = media_type(response)
            if media and media != "text/event-stream":
                raise self._not_an_answer("an event stream", media, await read_head(b"", chunks, timers))
            head = bytearray()
            # Once the reply is whole only [DONE] is missing: a server that then keeps the connection open gets the
            # drain grace instead of the stall timeout, and the reply is kept.
            with trio.CancelScope() as whole:
                try:
                    async for data in chunks:
                        if len(head) < ERROR_BODY_LIMIT:
                            head += data
                        events: list[StreamEvent] = []
                        real = False
                        for item in parser.feed(data):
                            if isinstance(item, SseData):
                                real = True
                                events.extend(assembler.feed(decode_chunk(item.payload, self.provider.name)))
                            elif isinstance(item, SseComment):
                                events.append(KEEP_ALIVE)
                            else:
                                done = True
                                break
                        if parser.foreign is not None:
                            body = await read_head(bytes(head), chunks, timers)
                            raise self._not_an_answer("an event stream", media, body)
                        await timers.hand_over(events, real, emit)
                        if done:
                            break
                        if assembler.complete:
                            timers.stall_scope.deadline = math.inf
                            whole.deadline = trio.current_time() + DRAIN_GRACE_S
                except httpx.TransportError as exc:
                    if not assembler.complete:
                        raise StreamBrokenError(
                            f"the stream broke after {assembler.chunks_seen} chunks ({type(exc).__name__}: {exc})"
                        ) from exc
                if not done and not assembler.chunks_seen and parser.unfinished_foreign() is not None:
                    raise self._not_an_answer("an event stream", media, bytes(head))
            if done:
                await drain(chunks, timers)
        if not assembler.finished:
            raise StreamBrokenError(
                f"the stream ended after {assembler.chunks_seen} chunks without a finish reason"
                + ("" if done else " or [DONE]")
            )
        return assembler.finish()

    async def _json_once(self, payload: bytes, emit: Emit, timers: Timers) -> Reply:
        body = bytearray()
        headers = {"Accept": "application/json"}
        limit = self.settings.max_reply_chars
        byte_limit = 6 * limit + ERROR_BODY_LIMIT  # a character is at most 6 bytes of JSON (a \uXXXX escape)
        async with self._http.stream("POST", self.url, content=payload, headers=headers) as response:
            await self._raise_for_status(response)
            media = media_type(response)
            if media and media != "application/json" and not media.endswith("+json"):
                chunks = response.aiter_bytes()
                raise self._not_an_answer("JSON", media, await read_head(b"", chunks, timers))
            try:
                async for data in response.aiter_bytes():
                    real = bool(data.strip())  # DeepSeek keeps a non-streamed request alive with blank lines
                    body += data
                    if len(body) > byte_limit:
                        raise ReplyTooLargeError.over(limit, f"(its body passed {byte_limit:,} bytes)")
                    if real:
                        timers.real_data()
            except httpx.TransportError as exc:
                raise StreamBrokenError(
                    f"the reply broke after {len(body)} bytes ({type(exc).__name__}: {exc})"
                ) from exc
        text = bytes(body).strip()
        try:
            completion = ChatCompletion.model_validate_json(text)
        except ValidationError as exc:
            message = server_message(text) if b'"error"' in text[:64] else None
            if message is not None:
                raise error_for_status(500, message, provider=self.provider.name) from exc
            if not text.startswith(b"{"):
                raise self._not_an_answer("JSON", media, text[:ERROR_BODY_LIMIT]) from exc
            raise ProtocolError(f"the reply is not a chat completion: {text[:200]!r}") from exc
        reply = reply_from_completion(completion)
        if reply_chars(reply) > limit:
            raise ReplyTooLargeError.over(limit, f"({reply_chars(reply):,} characters)")
        await timers.hand_over(list(events_of_reply(reply)), True, emit)
        return reply
