"""The provider's dialect (sessions/wire/provider.py): which fields a request carries, how usage is read, what an
error says, and that a client routes a model to another provider's client."""

from __future__ import annotations

import httpx
import trio
from hypothesis import given
from hypothesis import strategies as st

from sessions.accounting.diagnostics import CACHE_NOT_REPORTED, CacheTracker
from sessions.accounting.prices import default_price_book
from sessions.request_bytes import RequestBytes
from sessions.wire.client import DeepSeekClient
from sessions.wire.errors import BadRequestError, ContextTooLargeError, error_for_status
from sessions.wire.messages import ChatRequest, PromptTokensDetails, Usage, UserMessage
from sessions.wire.provider import DEEPSEEK, Provider, ServerTimings, cache_reported, read_usage, timings_of

LOCAL = Provider(name="llama-local", kind="openai")


class _Fake:
    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def provider_for(self, model: str) -> Provider:
        return self.provider


def test_an_openai_provider_gets_no_deepseek_field_and_deepseek_keeps_its_bytes() -> None:
    from sessions.prompt.prefix import build_prefix

    prefix = build_prefix("system", [], None)
    deepseek = RequestBytes(thinking=False, reasoning_effort="high").head(prefix, "m")
    assert b'"thinking":{"type":"disabled"}' in deepseek  # as ever: DeepSeek is told thinking is off
    local = RequestBytes(thinking=True, reasoning_effort="high", client=_Fake(LOCAL)).head(prefix, "m")
    assert b"thinking" not in local and b"reasoning_effort" not in local


@given(prompt=st.integers(0, 10**9), cached=st.integers(0, 2 * 10**9))
def test_cached_tokens_become_the_hit_and_the_rest_the_miss(prompt: int, cached: int) -> None:
    usage = Usage(prompt_tokens=prompt, prompt_tokens_details=PromptTokensDetails(cached_tokens=cached))
    read = read_usage(usage)
    assert read is not None
    assert read.prompt_cache_hit_tokens + read.prompt_cache_miss_tokens == (prompt if prompt else 0)
    assert read.prompt_cache_hit_tokens == (min(cached, prompt) if prompt else 0)
    assert cache_reported(read)


@given(prompt=st.integers(1, 10**9), cache_n=st.integers(0, 2 * 10**9))
def test_llama_server_timings_count_the_hits_when_no_cached_tokens_came(prompt: int, cache_n: int) -> None:
    timings = timings_of({"timings": {"cache_n": cache_n, "prompt_n": max(0, prompt - cache_n), "prompt_ms": 1.0}})
    assert timings is not None
    read = read_usage(Usage(prompt_tokens=prompt, completion_tokens=3), timings)
    assert read is not None and cache_reported(read)
    assert read.prompt_cache_hit_tokens == min(cache_n, prompt)
    assert read.prompt_cache_hit_tokens + read.prompt_cache_miss_tokens == prompt


def test_cached_tokens_win_over_timings_and_timings_alone_are_a_usage() -> None:
    timings = ServerTimings(cache_n=90, prompt_n=10, predicted_n=4)
    both = Usage(prompt_tokens=100, prompt_tokens_details=PromptTokensDetails(cached_tokens=80))
    read = read_usage(both, timings)
    assert read is not None and read.prompt_cache_hit_tokens == 80
    alone = read_usage(None, timings)
    assert alone is not None
    assert (alone.prompt_tokens, alone.prompt_cache_hit_tokens, alone.prompt_cache_miss_tokens) == (100, 90, 10)
    assert alone.completion_tokens == 4
    assert timings_of({"timings": {"prompt_n": 3}}) is None  # no cache_n: nothing said about the cache
    assert timings_of({"timings": "fast"}) is None and timings_of(None) is None


def test_the_stream_and_a_whole_reply_read_the_timings_of_llama_server() -> None:
    from sessions.wire.messages import ChatCompletion, StreamChunk
    from sessions.wire.stream import StreamAssembler, reply_from_completion

    usage = {"prompt_tokens": 31, "completion_tokens": 3, "total_tokens": 34}
    timings = {"cache_n": 30, "prompt_n": 1, "predicted_n": 3}
    assembler = StreamAssembler()
    assembler.feed(StreamChunk.model_validate({"choices": [{"index": 0, "delta": {"content": "hi"}}]}))
    assembler.feed(StreamChunk.model_validate({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    assembler.feed(StreamChunk.model_validate({"choices": [], "usage": usage, "timings": timings}))
    streamed = assembler.finish().usage
    assert streamed is not None and (streamed.prompt_cache_hit_tokens, streamed.prompt_cache_miss_tokens) == (30, 1)
    whole = ChatCompletion.model_validate(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
            "usage": usage,
            "timings": timings,
        }
    )
    read = reply_from_completion(whole).usage
    assert read is not None and (read.prompt_cache_hit_tokens, read.prompt_cache_miss_tokens) == (30, 1)


def test_deepseek_fields_win_and_no_split_is_not_reported() -> None:
    both = Usage(prompt_tokens=10, prompt_cache_hit_tokens=4, prompt_cache_miss_tokens=6)
    assert read_usage(both) == both
    bare = Usage(prompt_tokens=1000, completion_tokens=5)
    assert read_usage(bare) == bare and not cache_reported(bare)
    assert read_usage(None) is None


def test_a_cache_not_reported_is_never_an_unexplained_miss_and_is_priced_as_missed() -> None:
    tracker = CacheTracker()
    bare = Usage(prompt_tokens=5000, completion_tokens=5)
    tracker.observe(model="m", fingerprint="f", epoch=0, rewrite_reason=None, usage=bare)
    second = tracker.observe(model="m", fingerprint="f", epoch=0, rewrite_reason=None, usage=bare)
    assert not second.unexplained_miss and second.change_reason == CACHE_NOT_REPORTED
    book = default_price_book()
    from datetime import UTC, datetime

    cost = book.cost(bare, "deepseek-chat", datetime(2026, 6, 1, tzinfo=UTC))
    assert cost.miss_tokens == 5000 and cost.hit_tokens == 0


def test_an_unpriced_model_costs_nothing_known_and_never_raises() -> None:
    from datetime import UTC, datetime

    book = default_price_book().with_unpriced(frozenset({"local-coder"}))
    assert book.knows("local-coder") and book.is_unpriced("local-coder") and not book.knows("other")
    cost = book.cost(Usage(prompt_tokens=100, completion_tokens=3), "local-coder", datetime(2026, 6, 1, tzinfo=UTC))
    assert cost.total == 0 and cost.family == "unpriced"


def test_errors_name_the_provider_and_a_context_overflow_is_not_a_bug() -> None:
    said = "the request exceeds the available context size, try increasing it"
    error = error_for_status(400, said, provider="llama-local")
    assert isinstance(error, ContextTooLargeError) and isinstance(error, BadRequestError)
    assert error.message.startswith("llama-local refused the request") and "bug" not in error.message
    other = error_for_status(400, "Unrecognized request argument supplied: thinking", provider="llama-local")
    assert other.message.startswith("llama-local rejected the request (HTTP 400)") and "[[providers]]" in other.message
    assert error_for_status(401, None, provider="gw", key_env="GW_KEY").message.startswith("gw rejected the API key")
    assert "platform.deepseek.com" in error_for_status(401, None).message  # DeepSeek's as before
    assert error_for_status(503, "busy").message.startswith("DeepSeek answered HTTP 503")


def test_a_client_routes_a_model_to_another_providers_client() -> None:
    seen: list[tuple[str, bytes]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.content))
        body = (
            b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
            b'data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1,'
            b'"prompt_tokens_details":{"cached_tokens":32}}}\n\ndata: [DONE]\n\n'
        )
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def main() -> None:
        transport = httpx.MockTransport(answer)
        main_client = DeepSeekClient(base_url="https://api.deepseek.com", api_key="k", transport=transport)
        local = DeepSeekClient(base_url="http://127.0.0.1:9/v1", api_key=None, transport=transport, provider=LOCAL)
        main_client.route("local-coder", local)
        assert main_client.provider_for("local-coder") == LOCAL and main_client.provider_for("x") == DEEPSEEK
        request = ChatRequest(model="local-coder", messages=(UserMessage(content="hi"),))
        reply = await main_client.complete(request)
        await main_client.aclose()
        assert seen[0][0] == "http://127.0.0.1:9/v1/chat/completions"
        assert reply.usage is not None and reply.usage.prompt_cache_hit_tokens == 32
        assert reply.usage.prompt_cache_miss_tokens == 8

    trio.run(main)


@given(cap=st.integers(1, 10**6), asked=st.none() | st.integers(1, 10**6))
def test_max_output_bounds_max_tokens_and_only_for_its_model(cap: int, asked: int | None) -> None:
    from sessions.prompt.prefix import build_prefix

    prefix = build_prefix("system", [], None)
    capped = RequestBytes(thinking=True, reasoning_effort="high", client=_Fake(LOCAL), max_output={"local": cap})
    sent = capped.request(prefix, "local", asked).max_tokens
    assert sent == (cap if asked is None else min(asked, cap))
    assert capped.request(prefix, "other", asked).max_tokens == asked  # another model: as asked, or none
    assert capped.head(prefix, "local") == capped.head(prefix, "local")  # one head, the same bytes every time
    assert f'"max_tokens":{cap}'.encode() in capped.head(prefix, "local")


def test_a_capped_model_is_not_asked_again_for_a_cut_reply() -> None:
    from sessions.session import SessionSettings, cut_retry_reason
    from sessions.wire.messages import AssistantMessage
    from sessions.wire.stream import Reply

    cut = Reply(message=AssistantMessage(content="half"), usage=None, finish_reason="length")
    plain = SessionSettings(model="local", retry_when_cut=True)
    assert cut_retry_reason(cut, plain) is not None
    capped = SessionSettings(model="local", retry_when_cut=True, max_output={"local": 512})
    assert cut_retry_reason(cut, capped) is None
    assert cut_retry_reason(cut, capped, "deepseek-v4-pro") is not None  # an escalation to an uncapped model
