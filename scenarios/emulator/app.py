"""The emulator itself, free of any I/O: a request in, a response plan out. ``server.py`` speaks HTTP for it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scenarios.emulator.accounting import Accountant
from scenarios.emulator.errors import ApiError, InjectedFault, ScriptExhausted
from scenarios.emulator.faults import Attempt, Generated, generate, plan_attempt
from scenarios.emulator.latency import LatencyModel
from scenarios.emulator.render import Segment
from scenarios.emulator.script import DropFault, HttpStatusFault, ReplySpec, Script, StallFault, fingerprint
from scenarios.emulator.stats import Stats
from scenarios.emulator.streaming import completion_body, sse_events, usage
from scenarios.emulator.validation import ModelLimits, ValidRequest, check_auth, check_context, parse_json, validate

DEFAULT_MODELS: tuple[str, ...] = (
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "deepseek-flash",
    "deepseek-pro",
    "deepseek-chat",
    "deepseek-reasoner",
)
UNSCRIPTED = ReplySpec(
    reasoning="No script is loaded, so the emulator gives its fixed answer.",
    content="This is the DeepSeek emulator: no script is loaded, so every reply is this short fixed text.",
)
CHAT_PATHS = ("/chat/completions", "/v1/chat/completions")
MODELS_PATHS = ("/models", "/v1/models")
BALANCE_PATHS = ("/user/balance", "/v1/user/balance")
BALANCE = {
    "is_available": True,
    "balance_infos": [
        {"currency": "USD", "total_balance": "42.00", "granted_balance": "2.00", "topped_up_balance": "40.00"}
    ],
}
"""What ``GET /user/balance`` answers (DeepSeek's shape: amounts as decimal strings); a key the emulator rejects gets
the same 401 as a chat request."""


@dataclass(frozen=True, slots=True)
class Plain:
    """A whole response; ``drop`` closes the connection without one (after ``delay``)."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"
    delay: float = 0.0
    drop: bool = False


@dataclass(frozen=True, slots=True)
class Streamed:
    """A 200 ``text/event-stream``: ``events`` sent in order, with the faults and pacing of this attempt."""

    events: list[bytes]
    keep_alives: int = 0
    keep_alive_interval: float = 0.0
    first_delay: float = 0.0
    chunk_delay: float = 0.0
    stall_at: int | None = None
    stall_seconds: float = 0.0
    drop_at: int | None = None
    write_bytes: int | None = None
    """Write each event in pieces of this many bytes (a scripted stream shape)."""


Response = Plain | Streamed


def json_response(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> Plain:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Plain(status=status, body=body, headers=headers)


def error_response(err: ApiError) -> Plain:
    return json_response(err.status, err.body(), err.headers)


@dataclass(slots=True)
class _Cursor:
    next_reply: int = 0
    fired: dict[int, list[int]] = field(default_factory=dict)


class Emulator:
    """Scripted replies, honest prefix-cache accounting, faults and stats: everything but the sockets."""

    def __init__(
        self,
        *,
        script: Script | None = None,
        cache_unit: int = 128,
        latency: LatencyModel | None = None,
        models: tuple[str, ...] | None = DEFAULT_MODELS,
        reject_keys: tuple[str, ...] = (),
        limits: ModelLimits | None = None,
    ) -> None:
        self.script = script
        self.limits = limits or ModelLimits()
        """The emulated model's context window and output limit (DESIGN §6: requests past them get DeepSeek's 400)."""
        self.reject_keys = reject_keys
        """Keys answered with 401 (``reasonix emulate --reject-key``), besides the script's ``reject_keys``."""
        self.latency = latency
        self.models = models
        self.accountant = Accountant(cache_unit)
        self._stats = Stats()
        self._cursors: dict[str, _Cursor] = {}
        self.intercept: Callable[[str], bool] | None = None
        """Called with the session key of each chat request before it is answered; ``True`` closes the connection
        without an answer and without using the reply (a replay kills its client process there)."""

    # ------------------------------------------------------------------------------------------- control

    def stats(self) -> dict[str, Any]:
        out = self._stats.to_json()
        out["cache_unit"] = self.accountant.unit
        out["script_position"] = {k: c.next_reply for k, c in sorted(self._cursors.items())}
        return out

    def reset(self, *, cache: bool = True, counters: bool = True, script: bool = True) -> None:
        """Forget the stored prefixes, the counters, and/or where each session is in its script."""
        if cache:
            self.accountant.clear()
        if counters:
            self._stats = Stats()
        if script:
            self._cursors.clear()

    def load_script(self, script: Script | None) -> None:
        """Play another script from its start (the cache and the counters stay)."""
        self.script = script
        self._cursors.clear()

    # ------------------------------------------------------------------------------------------- routing

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        """``headers`` have lower-case names."""
        path = path.split("?", 1)[0].rstrip("/") or "/"
        try:
            if path in CHAT_PATHS:
                self._require(method, "POST")
                return self._chat(headers, body)
            if path in MODELS_PATHS:
                self._require(method, "GET")
                check_auth(headers, self._rejected())
                return self._models()
            if path in BALANCE_PATHS:
                self._require(method, "GET")
                check_auth(headers, self._rejected())
                return json_response(200, BALANCE)
            if path == "/emulator/stats":
                self._require(method, "GET")
                return json_response(200, self.stats())
            if path == "/emulator/reset":
                self._require(method, "POST")
                return self._reset(body)
            raise ApiError(404, f"no such endpoint: {method} {path}", code="not_found")
        except ApiError as err:
            return error_response(err)

    def _rejected(self) -> frozenset[str]:
        return frozenset(self.reject_keys) | frozenset(self.script.reject_keys if self.script else ())

    @staticmethod
    def _require(method: str, expected: str) -> None:
        if method != expected:
            raise ApiError(405, f"use {expected} here, not {method}", code="method_not_allowed")

    def _models(self) -> Plain:
        models = self.models or DEFAULT_MODELS
        data = [{"id": m, "object": "model", "owned_by": "deepseek"} for m in models]
        return json_response(200, {"object": "list", "data": data})

    def _reset(self, body: bytes) -> Plain:
        opts = parse_json(body) if body.strip() else {}
        if not isinstance(opts, Mapping) or not all(isinstance(opts.get(k, True), bool) for k in opts):
            raise ApiError(400, 'reset takes {"cache": bool, "counters": bool, "script": bool} (all default true)')
        self.reset(cache=opts.get("cache", True), counters=opts.get("counters", True), script=opts.get("script", True))
        return json_response(200, {"reset": True})

    # ---------------------------------------------------------------------------------------------- chat

    def _session(self, req: ValidRequest) -> tuple[str, ReplySpec, int, _Cursor | None]:
        """The session key, its next reply, that reply's index, and the cursor (``None`` when unscripted)."""
        if self.script is None:
            return "fp:" + fingerprint(req.system_text or ""), UNSCRIPTED, 0, None
        spec = self.script.session_for(req.system_text, req.last_user_text)
        if spec is None:
            shown = (req.system_text or "")[:60]
            raise ScriptExhausted(
                "no session of the emulator script matches this request (first system message "
                f"{fingerprint(req.system_text or '')}: {shown!r}); add a session whose system_contains or "
                "fingerprint matches it, or a catch-all session"
            )
        cursor = self._cursors.setdefault(spec.key, _Cursor())
        if cursor.next_reply >= len(spec.replies):
            raise ScriptExhausted(
                f"the emulator script ran out of replies for session {spec.key!r}: all {len(spec.replies)} were "
                "served; add replies to that session or reset the emulator"
            )
        return spec.key, spec.replies[cursor.next_reply], cursor.next_reply, cursor

    def _chat(self, headers: Mapping[str, str], raw: bytes) -> Response:
        check_auth(headers, self._rejected())
        req = validate(parse_json(raw), models=self.models, limits=self.limits)
        segments = self.accountant.input_segments(req.body, thinking=req.thinking)
        check_context(self.limits, sum(seg.count for seg in segments), req.body.get("max_tokens"))
        key, reply, index, cursor = self._session(req)
        if self.intercept is not None and self.intercept(key):
            return Plain(status=200, drop=True)
        self._stats.request(req.model, key)
        attempt = plan_attempt(reply, cursor.fired.setdefault(index, []) if cursor else [])
        if isinstance(attempt.failing, HttpStatusFault):
            self._stats.fault(req.model, key, f"http_{attempt.failing.status}")
            raise _status_error(attempt.failing)
        for fault in reply.faults:
            if fault.kind not in ("http_status", "drop", "stall", "keep_alive"):
                self._stats.fault(req.model, key, fault.kind)
        if attempt.failing is not None:
            self._stats.fault(req.model, key, attempt.failing.kind)
        elif attempt.slow is not None:
            self._stats.fault(req.model, key, "stall")
        if attempt.keep_alive is not None and req.stream:
            self._stats.fault(req.model, key, "keep_alive")
        if attempt.delivers and cursor is not None:
            cursor.next_reply += 1
        generated = generate(reply, session=key, reply_index=index)
        return self._reply(req, key, generated, attempt, segments)

    def _reply(
        self, req: ValidRequest, key: str, gen: Generated, attempt: Attempt, segments: list[Segment]
    ) -> Response:
        acct = self.accountant
        lookup, segs = acct.account_input(req.model, req.body, thinking=req.thinking, segments=segments)
        reasoning = gen.reasoning if req.thinking else ""
        out = acct.account_output(
            req.model, segs, reasoning=reasoning, content=gen.content, calls=[(c.name, c.arguments) for c in gen.calls]
        )
        reasoning_tokens = acct.segments.segment(reasoning).count
        completion = max(out.count, reasoning_tokens)
        self._stats.usage(
            req.model,
            key,
            prompt=lookup.prompt_tokens,
            hit=lookup.hit_tokens,
            ideal=lookup.ideal_hit_tokens,
            completion=completion,
            reasoning=reasoning_tokens,
        )
        use = usage(
            prompt=lookup.prompt_tokens, hit=lookup.hit_tokens, completion=completion, reasoning=reasoning_tokens
        )
        if not req.thinking:
            gen = replace(gen, reasoning="")
        cid, created = str(uuid.uuid4()), int(time.time())
        latency = self.latency.for_model(req.model) if self.latency else None
        ttft = latency.first_token_delay(lookup.miss_tokens) if latency else 0.0
        failing = attempt.failing
        if not req.stream:
            body = completion_body(
                gen, completion_id=cid, created=created, model=req.model, thinking=req.thinking, usage=use
            )
            if isinstance(failing, DropFault):
                return Plain(status=200, drop=True, delay=ttft)
            if isinstance(failing, StallFault):
                return Plain(status=200, drop=True, delay=ttft + failing.seconds)
            slow = attempt.slow.seconds if attempt.slow else 0.0
            extra = len(gen.reasoning + gen.content) / 4 * (latency.chunk_delay if latency else 0.0)
            return Plain(status=200, body=body, delay=ttft + slow + extra)
        events = sse_events(gen, completion_id=cid, created=created, model=req.model, thinking=req.thinking, usage=use)
        last = len(events) - 1  # a dropped stream never reaches data: [DONE]
        plan = Streamed(
            events=events,
            keep_alives=attempt.keep_alive.count if attempt.keep_alive else 0,
            keep_alive_interval=attempt.keep_alive.interval if attempt.keep_alive else 0.0,
            first_delay=ttft,
            chunk_delay=latency.chunk_delay if latency else 0.0,
            write_bytes=gen.shape.write_bytes if gen.shape is not None else None,
        )
        if isinstance(failing, DropFault):
            return replace(plan, drop_at=min(failing.after_chunks, last))
        if isinstance(failing, StallFault):
            at = min(failing.after_chunks, last)
            return replace(plan, stall_at=at, stall_seconds=failing.seconds, drop_at=at)
        if attempt.slow is not None:
            return replace(plan, stall_at=min(attempt.slow.after_chunks, last), stall_seconds=attempt.slow.seconds)
        return plan


def _status_error(fault: HttpStatusFault) -> InjectedFault:
    if fault.status == 429:
        retry = fault.retry_after if fault.retry_after is not None else 1.0
        return InjectedFault(
            429,
            "Rate Limit Reached: too many concurrent requests (injected by the emulator script); retry later",
            type="rate_limit_error",
            code="rate_limit_exceeded",
            headers=(("retry-after", _seconds(retry)),),
        )
    headers = (("retry-after", _seconds(fault.retry_after)),) if fault.retry_after is not None else ()
    if fault.status == 503:
        return InjectedFault(
            503,
            "Server overloaded (injected by the emulator script), please retry after a brief wait",
            type="service_unavailable_error",
            code="server_overloaded",
            headers=headers,
        )
    return InjectedFault(
        500,
        "Server error (injected by the emulator script), please retry after a brief wait",
        type="server_error",
        code="server_error",
        headers=headers,
    )


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
