"""What the recorded DeepSeek samples (tests/fixtures/deepseek-wire) must assemble into: one assertion per sample,
for the stream parser and for the client that reads them."""

from __future__ import annotations

from sessions.wire.stream import Reply

V4_REASONING = "The user asks about the weather in San Francisco. I should use the weather tool."
V4_ARGS = '{"location": "San Francisco"}'


def assert_v4_stream_reply(reply: Reply) -> None:
    msg = reply.message
    assert msg.reasoning_content == V4_REASONING
    assert msg.content == ""
    assert len(msg.tool_calls) == 1
    call = msg.tool_calls[0]
    assert call.id == "call_00_IhCAliIHtM9gKpgfqbBV9873"
    assert call.function.name == "weather"
    assert call.function.arguments == V4_ARGS
    assert reply.finish_reason == "tool_calls"
    assert reply.model == "deepseek-v4-flash"
    assert reply.id == "6e77be01-935b-42f6-8b05-d6c763528589"
    usage = reply.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens) == (374, 256, 118)
    assert (usage.completion_tokens, usage.total_tokens, usage.reasoning_tokens) == (61, 435, 17)
    assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 256


def assert_v32_stream_reply(reply: Reply) -> None:
    msg = reply.message
    assert msg.reasoning_content is None  # V3.2 chat never sent the field
    assert msg.content == "我可以帮。"  # the sample's author elided the middle with a "......" line
    assert [(c.id, c.function.name, c.function.arguments) for c in msg.tool_calls] == [
        ("call_00_JQSxFX1xOHGH6ajdpN88RMXO", "get_current_weather", '{"location": "北京", "format": "celsius"}'),
        ("call_01_L8UtYbkfaMFr7hzsToGPWGfI", "get_current_weather", '{"location": "洛阳", "format": "celsius"}'),
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.model == "deepseek-chat"
    usage = reply.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens) == (491, 448, 43)
    assert (usage.completion_tokens, usage.total_tokens) == (129, 620)


def assert_v4_json_reply(reply: Reply) -> None:
    msg = reply.message
    assert msg.reasoning_content == "The user asks about weather in San Francisco. I'll call the weather tool."
    assert msg.content == ""
    assert [(c.id, c.function.name, c.function.arguments) for c in msg.tool_calls] == [
        ("call_00_lCIkdHRa7AKmCG3TlxXz1061", "weather", V4_ARGS)
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.id == "21d2ddcb-4947-4e28-a783-857aedbe6ace"
    usage = reply.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens) == (374, 0, 374)
    assert (usage.completion_tokens, usage.reasoning_tokens) == (60, 16)
