"""What can go wrong talking to DeepSeek, named for who is at fault, each saying what to do next.

Every error carries ``status`` (the HTTP status, or None when there was none), ``retry_after`` (seconds the server
asked us to wait, if it said) and ``retryable`` (whether the client's retry loop may try the same request again).
The rule of DESIGN §4: retry 429 / 500 / 503 and connection failures, never 400 / 401 / 402 / 422.
"""

from __future__ import annotations

from typing import ClassVar

DEEPSEEK = "DeepSeek"
"""The name of the built-in provider, said when no other is configured (every message as it always was)."""


class DeepSeekError(Exception):
    """Base of everything the DeepSeek client raises."""

    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.server_message = server_message

    @property
    def retryable(self) -> bool:
        return self.default_retryable


# ------------------------------------------------------------------------------------------ the caller is at fault


class AuthenticationError(DeepSeekError):
    """401: the API key is missing, wrong or revoked."""

    @classmethod
    def from_server(
        cls, server_message: str | None, *, key_env: str = "DEEPSEEK_API_KEY", provider: str = DEEPSEEK
    ) -> AuthenticationError:
        said = f" (server said: {server_message})" if server_message else ""
        if provider != DEEPSEEK:
            return cls(
                f"{provider} rejected the API key (HTTP 401){said}. Set {key_env} to a key that server accepts (or "
                f"point api_key_env of its [[providers]] entry at the variable that holds it), then run the command "
                f"again.",
                status=401,
                server_message=server_message,
            )
        return cls(
            f"DeepSeek rejected the API key (HTTP 401){said}. Set {key_env} to a valid key from "
            f"https://platform.deepseek.com/api_keys (or point api_key_env in reasonix.toml at the variable that "
            f"holds it), then run the command again.",
            status=401,
            server_message=server_message,
        )


class InsufficientBalanceError(DeepSeekError):
    """402: the account has run out of credit."""

    @classmethod
    def from_server(cls, server_message: str | None, *, provider: str = DEEPSEEK) -> InsufficientBalanceError:
        said = f" (server said: {server_message})" if server_message else ""
        if provider != DEEPSEEK:
            return cls(
                f"{provider} says the account has insufficient balance (HTTP 402){said}. Top it up with that "
                f"provider, then run the command again.",
                status=402,
                server_message=server_message,
            )
        return cls(
            f"the DeepSeek account has insufficient balance (HTTP 402){said}. Top up at "
            f"https://platform.deepseek.com/top_up, then run the command again.",
            status=402,
            server_message=server_message,
        )


class BadRequestError(DeepSeekError):
    """400: the server rejected the request's format. Its message says what is wrong."""

    @classmethod
    def from_server(cls, server_message: str | None, *, provider: str = DEEPSEEK) -> BadRequestError:
        if is_context_overflow(server_message):
            return ContextTooLargeError(
                f"{provider} refused the request because it does not fit the model's context (HTTP 400): "
                f"{server_message}. Start a new session or compact this one (/compact), or give the model a larger "
                f"context (a server flag such as llama-server's -c, and context_window of its [[providers]] entry).",
                status=400,
                server_message=server_message,
            )
        if provider != DEEPSEEK:
            return cls(
                f"{provider} rejected the request (HTTP 400): {server_message or '(no message)'}. Check that the kind "
                f"and model of its [[providers]] entry match what that server accepts; if they do, report it with "
                f"the session journal.",
                status=400,
                server_message=server_message,
            )
        return cls(
            f"DeepSeek rejected the request as malformed (HTTP 400): {server_message or '(no message)'}. "
            f"This is a bug in how the request was built; report it with the session journal.",
            status=400,
            server_message=server_message,
        )


class ContextTooLargeError(BadRequestError):
    """400: the request does not fit the model's context window (DeepSeek's wording or an OpenAI-style server's)."""


CONTEXT_OVERFLOW_WORDS = (
    "maximum context length",
    "context length",
    "context size",
    "context window",
    "too many tokens",
    "context_length_exceeded",
)
"""How servers say a request is larger than the context: DeepSeek and OpenAI ("maximum context length"), llama.cpp
("exceeds the available context size"), vLLM and gateways ("context window", "context_length_exceeded")."""


def is_context_overflow(server_message: str | None) -> bool:
    """Whether a 400's message says the request does not fit the model's context."""
    text = (server_message or "").lower()
    return any(word in text for word in CONTEXT_OVERFLOW_WORDS)


class InvalidParameterError(DeepSeekError):
    """422: a parameter has a value the server does not accept."""

    @classmethod
    def from_server(cls, server_message: str | None, *, provider: str = DEEPSEEK) -> InvalidParameterError:
        return cls(
            f"{provider} rejected a request parameter (HTTP 422): {server_message or '(no message)'}. "
            f"Check the model ids and settings in reasonix.toml.",
            status=422,
            server_message=server_message,
        )


class UnexpectedStatusError(DeepSeekError):
    """Any other 4xx: most often a wrong base URL (404) or a proxy in the way."""

    @classmethod
    def from_server(cls, status: int, server_message: str | None, *, provider: str = DEEPSEEK) -> UnexpectedStatusError:
        where = (
            "base_url in reasonix.toml (it should be https://api.deepseek.com or a compatible endpoint)"
            if provider == DEEPSEEK
            else f"base_url of the [[providers]] entry {provider} (an OpenAI-compatible server usually ends in /v1)"
        )
        return cls(
            f"{provider} answered HTTP {status}: {server_message or '(no message)'}. Check {where}.",
            status=status,
            server_message=server_message,
        )


class RequestRefusedError(DeepSeekError):
    """We refuse to send a request the server is known to reject (e.g. tool_choice "required" in thinking mode)."""


# ------------------------------------------------------------------------------ the server or network is at fault


class _Transient(DeepSeekError):
    default_retryable = True


class RateLimitError(_Transient):
    """429: too many concurrent requests on the account."""


class ServerError(_Transient):
    """500 (or another 5xx): the server failed; retried with backoff."""


class OverloadedError(_Transient):
    """503: the server is overloaded; retried with backoff."""


class ResourcesExhaustedError(_Transient):
    """The reply ended with ``finish_reason: insufficient_system_resource``: DeepSeek cut it short for lack of
    capacity. The partial reply is discarded and the request retried, as for a broken stream."""


class ConnectionFailedError(_Transient):
    """Could not connect, or the connection failed before a response arrived."""


class StreamBrokenError(_Transient):
    """A streamed reply ended or broke before ``[DONE]`` / a finish reason. Retried as a whole request."""


class StallTimeoutError(_Transient):
    """No real data arrived for ``stall_timeout_s`` seconds (keep-alive comments do not count)."""


class DeadlineExceededError(DeepSeekError):
    """The per-request deadline passed. Not retried: the time budget is gone."""


class ProtocolError(DeepSeekError):
    """The server sent something that is not valid SSE / JSON of the expected shape."""


class UnexpectedBodyError(ProtocolError):
    """A 200 whose body is not an API answer at all (an HTML page from a wrong ``base_url``, a captive portal, a
    proxy): not retried, since asking the same URL again gets the same page."""


class ReplyTooLargeError(DeepSeekError):
    """The reply passed ``max_reply_chars`` (content, reasoning and tool-call arguments together) and was abandoned.
    Not retried: a runaway reply is as likely to run away again, and every character of it is paid for."""

    @classmethod
    def over(cls, limit: int, detail: str) -> ReplyTooLargeError:
        return cls(
            f"the reply passed the limit of {limit:,} characters (content, reasoning and tool-call arguments "
            f"together) {detail} and was abandoned. If replies this long are expected, raise max_reply_chars under "
            f"[client] in reasonix.toml."
        )


class RetriesExhaustedError(DeepSeekError):
    """Every attempt failed with a retryable error. ``last`` is the final one."""

    def __init__(self, last: DeepSeekError, attempts: int, *, provider: str = DEEPSEEK) -> None:
        super().__init__(
            f"gave up after {attempts} attempt{'s' if attempts != 1 else ''}: {last.message} "
            f"{provider} may be overloaded or unreachable; wait a few minutes and try again, or raise "
            f"retry attempts in reasonix.toml.",
            status=last.status,
            retry_after=last.retry_after,
            server_message=last.server_message,
        )
        self.last = last
        self.attempts = attempts


_TRANSIENT_BY_STATUS: dict[int, type[_Transient]] = {429: RateLimitError, 500: ServerError, 503: OverloadedError}


def error_for_status(
    status: int,
    server_message: str | None,
    *,
    retry_after: float | None = None,
    key_env: str = "DEEPSEEK_API_KEY",
    provider: str = DEEPSEEK,
) -> DeepSeekError:
    """The typed error for an HTTP error status, with an actionable message naming ``provider``."""
    if status == 401:
        return AuthenticationError.from_server(server_message, key_env=key_env, provider=provider)
    if status == 402:
        return InsufficientBalanceError.from_server(server_message, provider=provider)
    if status == 400:
        return BadRequestError.from_server(server_message, provider=provider)
    if status == 422:
        return InvalidParameterError.from_server(server_message, provider=provider)
    transient = _TRANSIENT_BY_STATUS.get(status)
    if transient is None and (status >= 500 or status == 408):
        transient = ServerError
    if transient is not None:
        wait = f"; it asked us to wait {retry_after:g}s" if retry_after is not None else ""
        return transient(
            f"{provider} answered HTTP {status}: {server_message or '(no message)'}{wait}.",
            status=status,
            retry_after=retry_after,
            server_message=server_message,
        )
    return UnexpectedStatusError.from_server(status, server_message, provider=provider)


def is_outage(error: DeepSeekError) -> bool:
    """Whether ``error`` says DeepSeek is overloaded, rate-limiting, failing or out of reach (still, after the
    client's own retries): waiting may fix it. A refused key, an exhausted balance or a rejected request are not
    outages; waiting would not change them."""
    if isinstance(error, RetriesExhaustedError):
        return is_outage(error.last)
    return error.retryable or isinstance(error, DeadlineExceededError)
