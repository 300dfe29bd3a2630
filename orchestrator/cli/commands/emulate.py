"""``reasonix emulate``: the DeepSeek API emulator as a standalone loopback server.

Prints ``listening on http://HOST:PORT`` as its first line (flushed, so a parent process can read the port when
``--port 0`` picked one) and serves until interrupted. Point any OpenAI-compatible client at that URL with any
non-empty key, then read its cache efficiency at ``GET /emulator/stats``.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

DESCRIPTION = """\
The DeepSeek API emulator on loopback: scripted replies, honest prefix-cache accounting, faults.

Key: any non-empty 'Authorization: Bearer KEY' is accepted (reasonix sends a placeholder when no key is set and
--base-url points here); none at all is a 401, and so is a key named with --reject-key or in the script's
reject_keys, to try the bad-key path.

Endpoints:
  POST /chat/completions (and /v1/chat/completions)  the chat API, streamed or not, with DeepSeek's 400 rules
  GET  /models (and /v1/models)                      the model ids
  GET  /emulator/stats                               requests, hit and miss tokens per session, the ideal hits
  POST /emulator/reset                               forget the cache, the counters and/or the script position

Without --script every request gets a fixed reply; a script (scenarios/README.md) plays replies per session."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--reject-key",
        action="append",
        default=[],
        metavar="KEY",
        help="answer this API key with 401 'Authentication Fails' (repeatable)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default: 0)")
    parser.add_argument(
        "--script", type=Path, metavar="FILE", help="replies and faults to play (JSON or TOML, see scenarios/README.md)"
    )
    parser.add_argument(
        "--cache-unit", type=int, default=128, metavar="TOKENS", help="prefix-cache unit in tokens (default: 128)"
    )
    parser.add_argument(
        "--latency",
        default="off",
        metavar="SPEC",
        help="off (default), realistic, realistic-models, or ttft=SECONDS,miss_ms_per_ktok=MS,tps=RATE; per model: "
        "flash:ttft=0.4,tps=80;pro:ttft=1.2,tps=35",
    )


def _bind_error(exc: BaseException) -> OSError | None:
    """The OSError behind a failed bind, also when Trio's nursery wrapped it in an exception group."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, OSError) else None


def run(args: argparse.Namespace) -> int:
    import trio

    from scenarios.emulator import Emulator, LatencyModel, Script, ScriptInvalid, serve

    try:
        latency = LatencyModel.parse(args.latency)
    except ValueError as exc:
        print(f"reasonix emulate: {exc}", file=sys.stderr)
        return 2
    if args.cache_unit < 1:
        print("reasonix emulate: --cache-unit must be at least 1 token", file=sys.stderr)
        return 2
    try:
        script = Script.load(args.script) if args.script else None
    except ScriptInvalid as exc:
        print(f"reasonix emulate: {exc}", file=sys.stderr)
        return 2
    emulator = Emulator(script=script, cache_unit=args.cache_unit, latency=latency, reject_keys=tuple(args.reject_key))

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(serve, emulator, args.host, args.port)
                shown = f"[{host}]" if ":" in host else host
                print(f"listening on http://{shown}:{port}", flush=True)
                what = f"script {args.script}" if args.script else "no script (fixed replies)"
                note = f"cache unit {args.cache_unit} tokens, {what}; stats at /emulator/stats; Ctrl-C stops"
                print(note, flush=True)
                async for _ in signals:
                    nursery.cancel_scope.cancel()  # stop serving: open connections close with it
                    break

    try:
        trio.run(main)
    except (OSError, BaseExceptionGroup) as exc:
        bind_error = _bind_error(exc)
        if bind_error is None:
            raise
        reason = bind_error.strerror or str(bind_error)
        print(
            f"reasonix emulate: cannot listen on {args.host}:{args.port}: {reason}; "
            "pick another --port, or --port 0 for a free one",
            file=sys.stderr,
        )
        return 1
    print("emulator stopped", file=sys.stderr)
    return 0
