"""Issue 44: a real recording failed its own replay because a tool's output held a timing. The drift check blanks
what legitimately differs between runs of the same command inside tool output (timings, durations, addresses, pids,
temporary names) and still reports a changed prompt."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.replay.drift import prompt_drift
from orchestrator.replay.recorder import CapturedExchange, to_recorded
from orchestrator.replay.volatile import steady_text

SSE = (
    b'data: {"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def _exchange(system: str, tool_output: str, *, scavenged: str = "") -> CapturedExchange:
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "run the tests"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": tool_output},
    ]
    if scavenged:
        messages.append({"role": "user", "content": f"go on\n<tool-results>\n{scavenged}\n</tool-results>"})
    body = json.dumps({"model": "m", "messages": messages}).encode()
    return CapturedExchange(request=body, status=200, reply=bytearray(SSE), complete=True)


RUN_ONE = (
    "..\n----------------------------------------------------------------------\nRan 2 tests in 0.004s\n\nOK\n"
    "worker pid 4121 at 0x7f3a2c1b9e50, took 1.25 seconds in /tmp/tmpab12cd/x.py (0:00:01.25)"
)
RUN_TWO = (
    "..\n----------------------------------------------------------------------\nRan 2 tests in 0.011s\n\nOK\n"
    "worker pid 977 at 0x7f00dd001a10, took 0.8 seconds in /tmp/tmpzz99yy/x.py (0:00:00.80)"
)


def test_timings_pids_and_addresses_in_tool_output_are_no_drift() -> None:
    recorded = to_recorded([_exchange("You are X", RUN_ONE, scavenged="Ran 1 test in 0.001s")])
    live = [_exchange("You are X", RUN_TWO, scavenged="Ran 1 test in 0.093s")]
    assert prompt_drift(recorded, live) == []


def test_a_changed_prompt_or_a_changed_result_is_still_drift() -> None:
    recorded = to_recorded([_exchange("You are X", RUN_ONE)])
    (drift,) = prompt_drift(recorded, [_exchange("You are X. Be terse.", RUN_TWO)])
    assert "+  You are X. Be terse." in drift or "You are X. Be terse." in drift
    (changed,) = prompt_drift(recorded, [_exchange("You are X", RUN_ONE.replace("OK", "FAILED (failures=1)"))])
    assert "FAILED (failures=1)" in changed


@settings(max_examples=200, deadline=None)
@given(
    seconds=st.floats(0, 10_000, allow_nan=False).map(lambda f: f"{f:.3f}"),
    tests=st.integers(0, 10_000),
    pid=st.integers(1, 4_194_304),
)
def test_any_unittest_timing_or_pid_reads_the_same(seconds: str, tests: int, pid: int) -> None:
    line = f"Ran {tests} tests in {seconds}s (pid {pid})"
    assert steady_text(line) == steady_text(f"Ran {tests} tests in 0.001s (pid 1)")
    assert steady_text(line) != steady_text(f"Ran {tests + 1} tests in 0.001s (pid 1)")  # the count is no timing
