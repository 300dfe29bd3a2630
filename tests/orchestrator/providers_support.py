"""A plain OpenAI-style chat server on loopback, in a thread (``http.server``), for the provider tests.

It is what a strict OpenAI-compatible server looks like to the client: it rejects ``thinking`` and
``reasoning_effort`` (HTTP 400, as a strict server does), answers only for its own model name (404 otherwise), names
another model in its replies (its own name for what it runs), and reports the cache as OpenAI does,
``usage.prompt_tokens_details.cached_tokens`` and nothing of DeepSeek's, or sends no ``usage`` at all
(``usage="none"``), or reports it as a llama-server without ``cached_tokens`` does (``usage="timings"``: a usage
without details, and ``timings.cache_n`` / ``timings.prompt_n`` beside it). Its cache is a real prefix cache: a
request's cached tokens are the bytes it shares with the start of the previous request, a token per four bytes.
Replies are scripted like the emulator's (``content``, ``tool_calls`` of ``name`` and ``arguments``); once the
script runs out it answers ``done.``. Every request's exact body is kept, in order.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

DEEPSEEK_ONLY = ("thinking", "reasoning_effort")
SERVED_AS = "served-by-loopback"
"""The model name the server puts in its replies (not the one asked for: llama-server does the same)."""


def tokens(data: bytes) -> int:
    return len(data) // 4


@dataclass
class OpenAIServer:
    model: str
    replies: list[dict[str, Any]] = field(default_factory=list)
    usage: Literal["cached", "none", "timings"] = "cached"
    bodies: list[bytes] = field(default_factory=list)
    reported: list[dict[str, Any]] = field(default_factory=list)
    """The usage of every reply, as sent."""
    timings: list[dict[str, Any]] = field(default_factory=list)
    """The ``timings`` of every reply (``usage="timings"``), as sent."""
    url: str = ""

    def cached_tokens(self, body: bytes) -> int:
        if not self.bodies:
            return 0
        previous = self.bodies[-1]
        same = 0
        for a, b in zip(previous, body, strict=False):
            if a != b:
                break
            same += 1
        return tokens(body[:same])

    def answer(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            request = json.loads(body)
        except ValueError:
            return 400, {}, _error("the body is not JSON")
        unknown = [k for k in DEEPSEEK_ONLY if k in request]
        if unknown:
            return 400, {}, _error(f"Unrecognized request argument supplied: {', '.join(unknown)}")
        if request.get("model") != self.model:
            return 404, {}, _error(f"The model `{request.get('model')}` does not exist")
        cached = self.cached_tokens(body)
        self.bodies.append(body)
        scripted = self.replies.pop(0) if self.replies else {"content": "done."}
        prompt = tokens(body)
        usage: dict[str, Any] | None = None
        if self.usage == "cached":
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": 7,
                "total_tokens": prompt + 7,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
            self.reported.append(usage)
        timings: dict[str, Any] | None = None
        if self.usage == "timings":
            usage = {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}
            timings = {"cache_n": cached, "prompt_n": prompt - cached, "predicted_n": 7, "prompt_ms": 1.5}
            self.reported.append(usage)
            self.timings.append(timings)
        extra = {"timings": timings} if timings is not None else {}
        if not request.get("stream"):
            reply = {**_completion(scripted, usage), **extra}
            return 200, {"content-type": "application/json"}, json.dumps(reply).encode()
        return 200, {"content-type": "text/event-stream"}, _sse(scripted, usage, extra)


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()


def _calls(scripted: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
        }
        for i, c in enumerate(scripted.get("tool_calls") or [])
    ]


def _completion(scripted: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    calls = _calls(scripted)
    message: dict[str, Any] = {"role": "assistant", "content": scripted.get("content") or None}
    if calls:
        message["tool_calls"] = calls
    out: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": SERVED_AS,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


def _sse(scripted: dict[str, Any], usage: dict[str, Any] | None, extra: dict[str, Any]) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": SERVED_AS,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    if scripted.get("content"):
        events.append(chunk({"content": scripted["content"]}))
    calls = _calls(scripted)
    for i, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, **call}]}))
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    if usage is not None:  # OpenAI's include_usage: a last chunk with no choices (llama-server adds its timings)
        last = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": SERVED_AS,
            "choices": [],
            "usage": usage,
        }
        events.append({**last, **extra})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


@contextmanager
def openai_server(server: OpenAIServer) -> Iterator[OpenAIServer]:
    """Serve ``server`` on a free loopback port (``server.url`` ends in ``/v1``) for the block."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            if self.path != "/v1/chat/completions":
                status, headers, out = 404, {}, _error(f"no route {self.path}")
            else:
                with lock:
                    status, headers, out = server.answer(body)
            self.send_response(status)
            for k, v in {"content-type": "application/json", **headers}.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:
            out = json.dumps({"object": "list", "data": [{"id": server.model, "object": "model"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=30)


def provider_entry(name: str, server: OpenAIServer, **extra: Any) -> str:
    """A ``[[providers]]`` entry for ``server`` in TOML."""
    lines = [
        "[[providers]]",
        f'name = "{name}"',
        'kind = "openai"',
        f'base_url = "{server.url}"',
        f'model = "{server.model}"',
    ]
    for key, value in extra.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def byte_stable(bodies: list[bytes]) -> bool:
    """Each body starts with the previous one minus its closing ``]}``: consecutive requests only append."""
    return all(b.startswith(a[:-2]) for a, b in itertools.pairwise(bodies))


@contextmanager
def models_server(status: int, listed: tuple[str, ...], key: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """``GET /v1/models`` answering ``status`` with ``listed`` (401 to any other key than ``key``, when given); the
    Authorization header of every request, in order."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            auth = self.headers.get("Authorization") or ""
            seen.append(auth)
            code = status if self.path == "/v1/models" else 404
            if key is not None and auth != f"Bearer {key}":
                code = 401
            body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in listed]}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=30)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
