"""Reading a hook's answer and a Markdown file's front matter: whatever a program prints or a file holds, the reader
never fails, and the documented spellings mean what they say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.extensions.front_matter import parse_front_matter
from orchestrator.hooks.answer import HookAnswer, read_answer


@given(st.integers(-255, 255), st.text(), st.text())
def test_any_output_reads_as_an_answer(exit_code: int, stdout: str, stderr: str) -> None:
    answer = read_answer("`h` (pre_tool)", exit_code, stdout, stderr, plain_context=True)
    assert isinstance(answer, HookAnswer)
    if exit_code == 2:
        assert answer.blocks and answer.reason
    elif exit_code != 0:
        assert answer.decision is None and len(answer.notices) == 1


@given(st.text())
def test_any_text_splits_into_front_matter_and_a_body(text: str) -> None:
    meta, body = parse_front_matter(text)
    normalised = text.replace("\r\n", "\n").lstrip("\ufeff")
    assert body in normalised  # the body is the file's own text, after the front matter
    assert all(k == k.lower() and "-" not in k for k in meta)


def test_the_spellings_of_an_answer() -> None:
    def read(out: str) -> HookAnswer:
        return read_answer("h", 0, out, "", plain_context=False)

    assert read('{"decision": "approve"}').decision == "allow"
    denied = read('{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}')
    assert denied.blocks and denied.reason == "no"
    assert read('{"continue": false, "stopReason": "enough"}').blocks
    assert read('{"hookSpecificOutput": {"additionalContext": "ctx"}}').context == "ctx"
    assert read("plain words").context == ""
    assert read_answer("h", 0, "plain words", "", plain_context=True).context == "plain words"
    assert read("{not json").notices
    strictest = HookAnswer(decision="allow").then(HookAnswer(decision="deny", reason="r")).then(HookAnswer())
    assert strictest.decision == "deny" and strictest.reason == "r"
