"""``reasonix run`` against a loopback server that replays the real recorded DeepSeek responses.

The recorded model calls tools that do not exist here (``weather``, ``get_current_weather``): each call gets an error
result listing the valid tools, and the run goes on to a final answer.

Replies, in order: ``v4flash_thinking_toolcall.sse`` (one ``weather`` call), ``v32chat_parallel_toolcalls.sse``
(two parallel ``get_current_weather`` calls), then a final answer derived from that same recording: its content
chunks and its usage, with the tool-call chunks left out and ``finish_reason: stop`` (no recording ends in a plain
answer). The files are served byte for byte, including the recording's ``......`` elision lines.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from tests import wire_samples

from .run_support import clean_env, json_lines, reasonix

WIRE = wire_samples.WIRE
V4_SSE = WIRE / "v4flash_thinking_toolcall.sse"
V32_SSE = WIRE / "v32chat_parallel_toolcalls.sse"


def final_answer_from_v32() -> bytes:
    lines = V32_SSE.read_bytes().split(b"\n")
    kept = [line for line in lines if b'"tool_calls":[' not in line]
    return b"\n".join(kept).replace(b'"finish_reason":"tool_calls"', b'"finish_reason":"stop"')


def recorded_content(sse: bytes) -> str:
    text = ""
    for line in sse.split(b"\n"):
        if line.startswith(b"data: {"):
            delta = json.loads(line[6:])["choices"][0]["delta"]
            text += delta.get("content") or ""
    return text


class _Replay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    replies: ClassVar[list[bytes]]
    bodies: ClassVar[list[bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        cls = type(self)
        cls.bodies.append(body)
        if self.path != "/chat/completions" or not cls.replies:
            self.send_error(500, "the replay has no more recorded replies")
            return
        data = cls.replies.pop(0)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def replay_server(replies: list[bytes]) -> Iterator[tuple[str, list[bytes]]]:
    class Handler(_Replay):
        pass

    Handler.replies = list(replies)
    Handler.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", Handler.bodies
    finally:
        server.shutdown()
        server.server_close()


def test_run_replays_the_recorded_samples_and_survives_their_unknown_tools(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    final = final_answer_from_v32()
    answer = recorded_content(final)
    assert answer.startswith("我可以")
    with replay_server([V4_SSE.read_bytes(), V32_SSE.read_bytes(), final]) as (url, bodies):
        proc = reasonix(
            "run",
            "What is the weather in San Francisco?",
            "--workspace",
            str(ws),
            "--base-url",
            url,
            "--json",
            env=clean_env(tmp_path),
        )
    assert proc.returncode == 0, proc.stderr
    events = json_lines(proc.stdout)
    summary = events[-1]
    assert summary["status"] == "done" and summary["text"] == answer
    # The figures are the recorded ones, summed: 374 + 491 + 491 prompt tokens, 256 + 448 + 448 of them hits.
    assert summary["requests"] == 3
    assert summary["prompt_tokens"] == 374 + 491 + 491
    assert summary["prompt_cache_hit_tokens"] == 256 + 448 + 448
    assert summary["prompt_cache_miss_tokens"] == 118 + 43 + 43
    assert summary["completion_tokens"] == 61 + 129 + 129

    repairs = [e for e in events if e.get("kind") == "repair"]
    assert [(e["repair"], e["tool"]) for e in repairs] == [
        ("unknown_tool", "weather"),
        ("unknown_tool", "get_current_weather"),
        ("unknown_tool", "get_current_weather"),
    ]
    finished = [e for e in events if e.get("kind") == "tool_finished"]
    assert [e["name"] for e in finished] == ["weather", "get_current_weather", "get_current_weather"]
    assert all(e["is_error"] for e in finished)

    # What went back to the model: the recorded call, and an error result that lists the valid tools.
    second = json.loads(bodies[1])
    call, result = second["messages"][-2], second["messages"][-1]
    # The arguments go back exactly as their fragments streamed, never re-dumped.
    assert call["tool_calls"][0]["function"] == {"name": "weather", "arguments": '{"location": "San Francisco"}'}
    assert result["role"] == "tool" and result["tool_call_id"] == call["tool_calls"][0]["id"]
    assert "no tool named 'weather'" in result["content"]
    assert "Valid tool names: bash, edit_file, glob, grep, list_dir, read_file, write_file" in result["content"]
    third = json.loads(bodies[2])
    assert [m["role"] for m in third["messages"][-3:]] == ["assistant", "tool", "tool"]
    # Append-only: each request re-sends the previous one's bytes and appends.
    assert bodies[1].startswith(bodies[0][:-2]) and bodies[2].startswith(bodies[1][:-2])
