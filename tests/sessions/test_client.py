"""The client on the happy path: the recorded wire through the real httpx stack, request bytes, refusals, 4xx."""

import contextlib
import json
import typing
from collections.abc import AsyncIterator

import pytest

from sessions.wire.client import ClientSettings, DeepSeekClient, check_request, parse_retry_after
from sessions.wire.errors import (
    AuthenticationError,
    BadRequestError,
    InsufficientBalanceError,
    InvalidParameterError,
    RequestRefusedError,
    UnexpectedStatusError,
)
from sessions.wire.messages import (
    AssistantMessage,
    SystemMessage,
    Thinking,
    ToolMessage,
    UserMessage,
    encode_message,
    encode_request,
)
from sessions.wire.reply import ChatClient
from sessions.wire.stream import Completed, KeepAlive, StreamEvent, assemble_sse
from tests.sessions.fake_deepseek import V4_JSON, V4_SSE, V32_SSE, FakeDeepSeek, Scripted, error, sse, sse_lines
from tests.support.client import sample_request
from tests.support.wire_replies import assert_v4_json_reply, assert_v4_stream_reply, assert_v32_stream_reply


def client(fake: FakeDeepSeek, **settings: object) -> DeepSeekClient:
    return DeepSeekClient(
        base_url="https://api.deepseek.test/",
        api_key="sk-test",
        settings=ClientSettings.model_validate(settings),
        transport=fake.transport,
    )


async def test_v4_stream_through_the_client() -> None:
    fake = FakeDeepSeek(sse(b": keep-alive\n\n", *sse_lines(V4_SSE)))
    events: list[StreamEvent] = []
    async with client(fake) as c:
        reply = await c.complete(sample_request(), on_event=events.append)
    assert_v4_stream_reply(reply)
    expected_events, _ = assemble_sse(V4_SSE.read_bytes())
    assert events == [KeepAlive(), *expected_events]
    (seen,) = fake.seen
    assert seen.body == encode_request(sample_request())
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.headers["accept"] == "text/event-stream"
    assert json.loads(seen.body)["stream_options"] == {"include_usage": True}
    assert fake.bodies[0].closed


async def test_v32_stream_arriving_in_odd_pieces() -> None:
    raw = V32_SSE.read_bytes()
    pieces = [raw[i : i + 7] for i in range(0, len(raw), 7)]  # splits lines and UTF-8 characters alike
    fake = FakeDeepSeek(sse(*pieces))
    async with client(fake) as c:
        reply = await c.complete(sample_request())
    assert_v32_stream_reply(reply)


async def test_non_streamed_request_uses_the_json_path() -> None:
    # DeepSeek keeps a queued non-streamed request alive with blank lines before the JSON.
    fake = FakeDeepSeek(
        Scripted(parts=[b"\n", b"\n", V4_JSON.read_bytes()], headers={"content-type": "application/json"})
    )
    events: list[StreamEvent] = []
    async with client(fake) as c, c.stream(sample_request(stream=False)) as stream:
        events = [e async for e in stream]
    assert isinstance(events[-1], Completed)
    assert_v4_json_reply(events[-1].reply)
    body = json.loads(fake.seen[0].body)
    assert body["stream"] is False and "stream_options" not in body
    assert fake.seen[0].headers["accept"] == "application/json"


async def test_given_body_is_sent_unchanged() -> None:
    exact = encode_request(sample_request())[:-2] + b"]}"  # any bytes the session joined; here equal to a fresh encode
    odd = exact.replace(b'"Be terse."', b'"Be  terse."')  # and bytes the client could not have produced itself
    fake = FakeDeepSeek(sse(*sse_lines(V4_SSE)))
    async with client(fake) as c:
        await c.complete(sample_request(), body=odd)
    assert fake.seen[0].body == odd


async def test_history_carries_reasoning_and_raw_arguments_byte_for_byte() -> None:
    """Two real replies (one with reasoning, one without the field) go back exactly as they arrived."""
    _, v4 = assemble_sse(V4_SSE.read_bytes())
    _, v32 = assemble_sse(V32_SSE.read_bytes())
    assert v32.message.reasoning_content is None
    history = (
        SystemMessage(content="Be terse."),
        UserMessage(content="Weather in SF?"),
        v4.message,
        ToolMessage(tool_call_id=v4.message.tool_calls[0].id, content="sunny"),
        UserMessage(content="And Beijing, Luoyang?"),
        v32.message,
        *(ToolMessage(tool_call_id=call.id, content="clear") for call in v32.message.tool_calls),
    )
    fake = FakeDeepSeek(sse(*sse_lines(V4_SSE)))
    async with client(fake) as c:
        await c.complete(sample_request(messages=history))
    sent = fake.seen[0].body
    messages = json.loads(sent)["messages"]
    assert messages[2]["reasoning_content"] == v4.message.reasoning_content
    assert messages[5]["reasoning_content"] == ""  # never sent by the server; "" is required with tools
    # The raw argument strings, as JSON string literals, byte for byte (spacing and non-ASCII untouched).
    for call in (*v4.message.tool_calls, *v32.message.tool_calls):
        assert json.dumps(call.function.arguments, ensure_ascii=False).encode() in sent
    assert '"arguments":"{\\"location\\": \\"洛阳\\", \\"format\\": \\"celsius\\"}"'.encode() in sent
    # And each assistant message is exactly its own stored encoding.
    assert encode_message(v4.message) in sent
    assert encode_message(v32.message.with_reasoning_round_trip()) in sent


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "weather"}}])
async def test_tool_choice_refused_in_thinking_mode(choice: object) -> None:
    fake = FakeDeepSeek()
    async with client(fake) as c:
        for req in (
            sample_request(tool_choice=choice),
            sample_request(tool_choice=choice, thinking=Thinking(type="enabled")),
        ):
            with pytest.raises(RequestRefusedError, match="thinking mode"):
                await c.complete(req)
    assert fake.seen == []  # nothing was sent
    check_request(sample_request(tool_choice=choice, thinking=Thinking(type="disabled")))  # allowed without thinking
    check_request(sample_request(tool_choice="auto"))


async def test_401_is_not_retried_and_says_how_to_set_the_key() -> None:
    fake = FakeDeepSeek(error(401, "Authentication Fails, Your api key: ****abcd is invalid"))
    async with client(fake, api_key_env="REASONIX_KEY") as c:
        with pytest.raises(AuthenticationError) as info:
            await c.complete(sample_request())
    assert len(fake.seen) == 1
    err = info.value
    assert err.status == 401 and not err.retryable
    assert "Set REASONIX_KEY" in str(err) and "****abcd is invalid" in str(err)


@pytest.mark.parametrize(
    ("status", "cls", "needle"),
    [
        (402, InsufficientBalanceError, "Top up at https://platform.deepseek.com"),
        (400, BadRequestError, "The reasoning_content in the thinking mode must be passed back"),
        (422, InvalidParameterError, "The reasoning_content in the thinking mode must be passed back"),
        (404, UnexpectedStatusError, "Check base_url"),
    ],
)
async def test_caller_faults_are_not_retried(status: int, cls: type[Exception], needle: str) -> None:
    fake = FakeDeepSeek(error(status, "The reasoning_content in the thinking mode must be passed back to the API."))
    async with client(fake) as c:
        with pytest.raises(cls, match=needle):
            await c.complete(sample_request())
    assert len(fake.seen) == 1


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: retry now


def test_assistant_message_with_reasoning_round_trip_is_stable() -> None:
    msg = AssistantMessage(content="hi")
    assert (
        encode_message(msg.with_reasoning_round_trip()) == b'{"role":"assistant","content":"hi","reasoning_content":""}'
    )


def test_the_chat_client_protocol_types_what_stream_gives() -> None:
    # ChatClient.stream used to return Any: a caller could iterate it as anything and mypy would not say.
    hint = typing.get_type_hints(ChatClient.stream, include_extras=True)["return"]
    assert typing.get_origin(hint) is contextlib.AbstractAsyncContextManager
    assert typing.get_args(hint)[0] == AsyncIterator[StreamEvent]
    client: ChatClient = DeepSeekClient(base_url="http://127.0.0.1:9", api_key=None)  # the real client fits it
    assert isinstance(client.stream(sample_request()), contextlib.AbstractAsyncContextManager)
