"""Who is at the other end, and the quirks of its dialect, in one place.

A :class:`Provider` is a name (said in every message about the other end: ``llama-local answered HTTP 400``) and a
kind. The kind decides the wire dialect:

* ``deepseek``: the request carries ``thinking`` and ``reasoning_effort``; the usage carries
  ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``; an account has a balance (``GET /user/balance``).
* ``openai``: any OpenAI-compatible server (llama.cpp's llama-server, Ollama, vLLM, a gateway). Neither DeepSeek field
  is sent (a strict server rejects unknown fields); the cache figure is ``usage.prompt_tokens_details.cached_tokens``
  (the rest of ``prompt_tokens`` missed), and a server that reports neither has its cache "not reported": the usage
  then has prompt tokens and no hit/miss split, which is priced as all misses and never diagnosed as a miss.
  llama.cpp's llama-server also reports its prefix reuse outside the usage, as ``timings.cache_n`` (prompt tokens
  taken from its cache) and ``timings.prompt_n`` (prompt tokens evaluated), on a whole reply and on the last chunk of
  a stream: a server that sends those and no ``cached_tokens`` has its hits counted from ``cache_n``.

:func:`read_usage` is the one reading of a reply's usage, whatever the server sent; the client applies it to every
whole reply, so everything downstream reads DeepSeek's two fields (or their absence) and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sessions.wire.messages import Usage

ProviderKind = Literal["deepseek", "openai"]
PROVIDER_KINDS: tuple[ProviderKind, ...] = ("deepseek", "openai")
DEEPSEEK_NAME = "DeepSeek"


class Provider(BaseModel):
    """The other end of a client: its name in messages and its kind (the dialect)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(DEEPSEEK_NAME, min_length=1)
    kind: ProviderKind = "deepseek"

    @property
    def takes_thinking(self) -> bool:
        """Whether requests carry ``thinking`` and ``reasoning_effort`` (DeepSeek's fields)."""
        return self.kind == "deepseek"

    @property
    def has_balance(self) -> bool:
        """Whether ``GET /user/balance`` exists there."""
        return self.kind == "deepseek"

    @property
    def is_deepseek(self) -> bool:
        return self.kind == "deepseek" and self.name == DEEPSEEK_NAME


DEEPSEEK = Provider()
"""The built-in provider: what a user without ``[[providers]]`` talks to, byte for byte as before."""


class ServerTimings(BaseModel):
    """llama-server's ``timings`` beside a reply's usage: ``cache_n`` prompt tokens came from its cache, ``prompt_n``
    were evaluated, ``predicted_n`` written (llama.cpp tools/server, ``result_timings``)."""

    model_config = ConfigDict(extra="allow")
    cache_n: int | None = Field(None, ge=0)
    prompt_n: int | None = Field(None, ge=0)
    predicted_n: int | None = Field(None, ge=0)


def timings_of(extra: Mapping[str, Any] | None) -> ServerTimings | None:
    """The ``timings`` of a reply or chunk (its fields beyond OpenAI's), or ``None`` when it has none we can read."""
    raw = (extra or {}).get("timings")
    if not isinstance(raw, Mapping):
        return None
    try:
        timings = ServerTimings.model_validate(raw)
    except ValidationError:
        return None
    return timings if timings.cache_n is not None else None


def read_usage(usage: Usage | None, timings: ServerTimings | None = None) -> Usage | None:
    """A reply's usage with the cache split in DeepSeek's two fields, whichever way the server reported it.

    DeepSeek's own fields win; else OpenAI's ``prompt_tokens_details.cached_tokens`` (the rest of the prompt missed);
    else llama-server's ``timings.cache_n`` (the prompt is ``prompt_tokens``, or ``cache_n + prompt_n`` when the
    server sent no usage at all); else the split stays empty: the cache is not reported (:func:`cache_reported`).
    ``None`` without timings stays ``None``.
    """
    if usage is None:
        if timings is None or timings.cache_n is None or timings.prompt_n is None:
            return None
        prompt = timings.cache_n + timings.prompt_n
        return Usage.counted(prompt=prompt, hit=timings.cache_n, completion=timings.predicted_n or 0)
    if usage.prompt_cache_hit_tokens + usage.prompt_cache_miss_tokens > 0 or usage.prompt_tokens <= 0:
        return usage
    details = usage.prompt_tokens_details
    if details is not None and "cached_tokens" in details.model_fields_set:
        cached = details.cached_tokens
    elif timings is not None and timings.cache_n is not None:
        cached = timings.cache_n
    else:
        return usage
    cached = max(0, min(cached, usage.prompt_tokens))
    return usage.model_copy(
        update={"prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": usage.prompt_tokens - cached}
    )


def cache_reported(usage: Usage) -> bool:
    """Whether the server said how much of the prompt hit its cache (a usage without prompt tokens says nothing to
    doubt). A server that does not report it leaves the split empty."""
    return usage.prompt_tokens <= 0 or usage.prompt_cache_hit_tokens + usage.prompt_cache_miss_tokens > 0


class Routes:
    """A client's routes to other providers' clients, by model id: a session holds one client, and a request whose
    model another provider serves (an escalation, a role on another provider) goes there."""

    provider: Provider
    _routes: dict[str, Self]
    """Model id -> the client of the provider that serves it, when not this one."""

    async def close_routes(self) -> None:
        for other in {id(c): c for c in self._routes.values() if c is not self}.values():
            await other.aclose()

    async def aclose(self) -> None: ...

    def route(self, model: str, client: Self) -> None:
        """Send requests for ``model`` through ``client``."""
        if client is not self:
            self._routes[model] = client

    def client_for(self, model: str) -> Self:
        """The client that serves ``model``: a routed provider's, else this one."""
        return self._routes.get(model, self)

    def provider_for(self, model: str) -> Provider:
        """The provider (and so the dialect) a request for ``model`` goes to."""
        return self.client_for(model).provider
