from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.journal.jsonl import Journal, JournalHeader, read_journal
from sessions.log import MessageLog, encode_for_log
from sessions.wire.messages import AssistantMessage, FunctionCall, ToolCall, ToolMessage, UserMessage


def _header() -> JournalHeader:
    return JournalHeader(
        session="executor", model="deepseek-v4-flash", system='{"role":"system","content":"s"}', tools="[]"
    )


def _log() -> MessageLog:
    log = MessageLog()
    log.append(UserMessage(content="fix the bug — ünïcode"))
    log.append(
        AssistantMessage(
            content="",
            tool_calls=(ToolCall(id="c1", function=FunctionCall(name="read_file", arguments='{ "path" :"a.py"}')),),
        )
    )
    log.append(ToolMessage(tool_call_id="c1", content="print(1)\n"))
    return log


def test_journal_round_trips_the_exact_bytes(tmp_path: Path) -> None:
    log = _log()
    j = Journal(tmp_path / "s.jsonl")
    j.write_header(_header())
    for e in log:
        j.write_message(e.data)
    j.close()
    state = read_journal(tmp_path / "s.jsonl")
    assert [d for _, d in state.messages] == list(log.encoded)
    assert state.messages[0][0] == UserMessage(content="fix the bug — ünïcode")
    assert b'"reasoning_content":""' in log.encoded[1]  # round-trip rule applied once, at entry


def test_torn_last_line_is_tolerated_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    j = Journal(path)
    j.write_header(_header())
    j.write_message(_log().encoded[0])
    j.close()
    with path.open("ab") as fh:
        fh.write(b'{"t":"msg","raw":"{\\"role\\":\\"us')  # the process died here
    state = read_journal(path)
    assert state.torn_tail and len(state.messages) == 1
    j2 = Journal(path)
    j2.write_message(_log().encoded[2])
    j2.close()
    state2 = read_journal(path)
    assert not state2.torn_tail
    assert len(state2.messages) == 2


def test_rewrite_replaces_messages_and_counts_epochs(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    j = Journal(path)
    j.write_header(_header())
    for e in _log():
        j.write_message(e.data)
    j.write_rewrite("compaction", [_log().encoded[0]])
    j.write_message(_log().encoded[2])
    j.close()
    state = read_journal(path)
    assert state.epoch == 1
    assert [d for _, d in state.messages] == [_log().encoded[0], _log().encoded[2]]


def _journal_with_a_corrupt_line(path: Path) -> list[bytes]:
    """header, user, assistant (call c1), <corrupt>, tool result c1, user: the corrupt line is line 4."""
    log = _log()
    j = Journal(path)
    j.write_header(_header())
    for data in (*log.encoded, encode_for_log(UserMessage(content="and now?"))):
        j.write_message(data)
    j.close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"t":"msg","raw":"{\\"role\\":\\"us\x00\x00\x00 garbage from a bad disk block\n')
    path.write_bytes(b"".join(lines))
    return list(log.encoded)


def test_a_corrupt_line_in_the_middle_is_reported_and_later_lines_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    encoded = _journal_with_a_corrupt_line(path)
    state = read_journal(path)
    assert [d for _, d in state.messages][:3] == encoded
    assert len(state.messages) == 4 and not state.torn_tail
    assert state.corrupt_lines == [4]
    assert state.corruption_notice(path) == f"line 4 of {path} is corrupt and was skipped; 2 later lines kept"


def test_opening_a_journal_keeps_the_lines_after_a_corrupt_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _journal_with_a_corrupt_line(path)
    size = path.stat().st_size
    Journal(path).close()  # opening for append cuts only a torn tail
    assert path.stat().st_size == size
    assert len(read_journal(path).messages) == 4


@settings(max_examples=60)
@given(lines=st.integers(min_value=1, max_value=12), data=st.data())
def test_any_corrupt_line_loses_only_itself(
    tmp_path_factory: pytest.TempPathFactory, lines: int, data: st.DataObject
) -> None:
    path = tmp_path_factory.mktemp("j") / "s.jsonl"
    j = Journal(path)
    j.write_header(_header())
    texts = [f"message {i}" for i in range(lines)]
    for text in texts:
        j.write_message(encode_for_log(UserMessage(content=text)))
    j.close()
    raw = path.read_bytes().splitlines(keepends=True)
    bad = data.draw(st.integers(min_value=1, max_value=lines))  # any line but the header
    junk = data.draw(st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b))
    raw[bad] = b"\x00{" + junk + b"\n"
    path.write_bytes(b"".join(raw))
    state = read_journal(path)
    kept = [m.content for m, _ in state.messages]  # type: ignore[union-attr]
    if bad == lines:  # the last line: a torn tail, as before
        assert state.torn_tail and kept == texts[:-1]
    else:
        assert kept == texts[: bad - 1] + texts[bad:]
        assert state.corrupt_lines == [bad + 1]
