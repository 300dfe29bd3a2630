"""What escalation costs the harness, on this machine.

    .venv/bin/python bench/escalation_bench.py [--chars 2000000] [--delta 4] [--smoke]

* ``detector``: the marker detector fed ordinary content in small deltas (the common case: released at once, then
  pass-through) and content that starts with a marker and a long reason (held until recognised).
* ``estimate``: what the aborted flash call's input estimate costs: counting only what the log appended since the
  last whole flash request (the usual case), versus counting a whole body (first request, or after compaction).

``--smoke`` (CI, ``bench/smoke.py``): 5,000 characters, the marker recognised 50 times instead of 2,000.
"""

from __future__ import annotations

import argparse
import time

from orchestrator.policy.marker import MarkerDetector
from sessions.accounting import tokens


def _per_delta(text: str, delta: int, repeat: int = 3) -> tuple[float, int]:
    parts = [text[i : i + delta] for i in range(0, len(text), delta)]
    best = float("inf")
    for _ in range(repeat):
        det = MarkerDetector()
        start = time.perf_counter()
        for part in parts:
            det.feed(part)
        det.finish()
        best = min(best, time.perf_counter() - start)
    return best / len(parts) * 1e9, len(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=2_000_000)
    parser.add_argument("--delta", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 5,000 characters, 50 markers")
    args = parser.parse_args()
    rounds = 2000
    if args.smoke:
        args.chars, rounds = 5000, 50

    ordinary = ("The function subtracts where it should add; the fix is one line. " * (args.chars // 66 + 1))[
        : args.chars
    ]
    ns, n = _per_delta(ordinary, args.delta)
    print(f"detector, ordinary content: {ns:8.1f} ns per delta ({n} deltas of {args.delta} chars)")
    marked = "<<<NEEDS_PRO: " + "the invariant proof spans three modules " * 5 + ">>>"
    worst = float("inf")
    for _ in range(rounds):
        det = MarkerDetector()
        start = time.perf_counter()
        for ch in marked:
            det.feed(ch)
            if det.decision != "undecided":
                break
        worst = min(worst, time.perf_counter() - start)
    print(f"detector, marker with a {len(marked)}-char text fed 1 char at a time: {worst * 1e6:8.1f} µs to recognise")

    tokens.count("warm up the vocabulary")
    body = '{"role":"tool","content":"' + "line of a realistic tool result with code() and paths/x.py\\n" * 20 + '"},'
    whole = body * (args.chars // len(body) + 1)
    appended = body * 8
    for label, text in (("appended since the last flash request", appended), ("whole body", whole)):
        start = time.perf_counter()
        count = tokens.count(text)
        elapsed = time.perf_counter() - start
        print(f"estimate input, {label}: {len(text):>9} chars, {count:>8} tokens, {elapsed * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
