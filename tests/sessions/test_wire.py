import json

from hypothesis import given
from hypothesis import strategies as st

from sessions.wire.messages import (
    AssistantMessage,
    ChatRequest,
    FunctionCall,
    FunctionSchema,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSchema,
    UserMessage,
    encode_message,
    encode_request,
    encode_tools,
)

RAW_ARGS = '{"location":  "San Francisco" , "unit":"c"}'  # odd spacing on purpose: must survive untouched


def _history() -> tuple[SystemMessage | UserMessage | AssistantMessage | ToolMessage, ...]:
    return (
        SystemMessage(content="You are terse."),
        UserMessage(content="Weather?"),
        AssistantMessage(
            content="",
            reasoning_content=None,
            tool_calls=(ToolCall(id="call_00_x", function=FunctionCall(name="weather", arguments=RAW_ARGS)),),
        ),
        ToolMessage(tool_call_id="call_00_x", content="sunny"),
    )


def test_assistant_keeps_raw_arguments_byte_for_byte() -> None:
    encoded = encode_message(_history()[2])
    assert json.dumps(RAW_ARGS, ensure_ascii=False).encode() in encoded


def test_request_with_tools_carries_empty_reasoning_content() -> None:
    tool = ToolSchema(function=FunctionSchema(name="weather", parameters={"type": "object", "properties": {}}))
    body = encode_request(ChatRequest(model="deepseek-v4-flash", messages=_history(), tools=(tool,)))
    decoded = json.loads(body)
    assert decoded["messages"][2]["reasoning_content"] == ""
    assert decoded["messages"][2]["tool_calls"][0]["function"]["arguments"] == RAW_ARGS
    assert list(decoded)[-1] == "messages"


def test_request_without_tools_leaves_reasoning_absent() -> None:
    body = encode_request(ChatRequest(model="m", messages=_history()))
    assert "reasoning_content" not in json.loads(body)["messages"][2]


def test_appending_messages_extends_the_body_bytes() -> None:
    req1 = ChatRequest(model="m", messages=_history()[:2])
    req2 = ChatRequest(model="m", messages=_history())
    b1, b2 = encode_request(req1), encode_request(req2)
    assert b2.startswith(b1[: -len(b"]}")])


def test_tool_order_and_key_order_are_canonical() -> None:
    a = ToolSchema(function=FunctionSchema(name="a", parameters={"type": "object", "properties": {"y": {}, "x": {}}}))
    b = ToolSchema(function=FunctionSchema(name="b"))
    assert encode_tools([a, b]) == encode_tools([b, a])
    assert encode_tools([a]).index(b'"x"') < encode_tools([a]).index(b'"y"')


@given(st.text(), st.text() | st.none(), st.text())
def test_equal_messages_encode_equal(content: str, reasoning: str | None, args: str) -> None:
    def make() -> AssistantMessage:
        return AssistantMessage(
            content=content,
            reasoning_content=reasoning,
            tool_calls=(ToolCall(id="c1", function=FunctionCall(name="f", arguments=args)),),
        )

    assert encode_message(make()) == encode_message(make())
    assert json.loads(encode_message(make()))["tool_calls"][0]["function"]["arguments"] == args
