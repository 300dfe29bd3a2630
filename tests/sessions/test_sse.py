import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.wire.errors import ProtocolError
from sessions.wire.sse import DONE, SseComment, SseData, SseItem, SseParser, parse_line, parse_sse
from tests.sessions.fake_deepseek import V4_SSE, V32_SSE

BODY = (
    b": keep-alive\n\n"
    b'data: {"a":1}\n\n'
    b"event: ignored\n"
    b": keep-alive\n\n"
    b'data:{"b":"\xe6\xb4\x9b\xe9\x98\xb3"}\n\n'
    b"......\n"
    b"data: [DONE]\n\n"
)
EXPECTED: list[SseItem] = [
    SseComment("keep-alive"),
    SseData('{"a":1}'),
    SseComment("keep-alive"),
    SseData('{"b":"洛阳"}'),
    DONE,
]


def test_parses_data_comments_and_done() -> None:
    parser = SseParser()
    assert parser.feed(BODY) == EXPECTED
    assert parser.lines_skipped == 2  # "event: ignored" and the "......" junk line


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_tolerates_crlf_and_cr(newline: bytes) -> None:
    assert SseParser().feed(BODY.replace(b"\n", newline)) == EXPECTED


@given(
    cuts=st.lists(st.integers(min_value=0, max_value=len(BODY) * 2), max_size=30),
    newline=st.sampled_from([b"\n", b"\r\n", b"\r"]),
)
def test_any_split_of_the_bytes_gives_the_same_items(cuts: list[int], newline: bytes) -> None:
    body = BODY.replace(b"\n", newline)
    points = sorted({min(c, len(body)) for c in cuts})
    parser = SseParser()
    items: list[SseItem] = []
    start = 0
    for point in [*points, len(body)]:
        items.extend(parser.feed(body[start:point]))
        start = point
    assert items == EXPECTED


def test_unterminated_last_line_is_not_data() -> None:
    parser = SseParser()
    assert parser.feed(b'data: {"a":1}\n\ndata: {"tru') == [SseData('{"a":1}')]
    assert parser.has_partial_line
    assert parser.close() == []


def test_parse_sse_accepts_a_file_without_final_newline() -> None:
    assert parse_sse(b'data: {"a":1}\n\ndata: [DONE]') == [SseData('{"a":1}'), DONE]


def test_invalid_utf8_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="not UTF-8"):
        SseParser().feed(b"data: \xff\xfe\n")


def test_parse_line() -> None:
    assert parse_line("data: [DONE]") is DONE
    assert parse_line(":") == SseComment("")
    assert parse_line("id: 3") is None


def test_recorded_samples() -> None:
    v4 = parse_sse(V4_SSE.read_bytes())
    assert v4[-1] is DONE
    assert sum(isinstance(i, SseData) for i in v4) == 30
    parser = SseParser()
    v32 = parser.feed(V32_SSE.read_bytes())
    assert v32[-1] is DONE
    assert sum(isinstance(i, SseData) for i in v32) == 43
    assert parser.lines_skipped == 2  # the two "......" lines the sample's author put in
