from pathlib import Path

from sessions.journal import Journal, JournalHeader, read_journal
from sessions.log import MessageLog
from sessions.wire import AssistantMessage, FunctionCall, ToolCall, ToolMessage, UserMessage


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
