"""A digest of every request body the library's scenarios send, to prove a refactor changed no byte sent to DeepSeek.

    .venv/bin/python bench/request_digest.py > before.txt     # on the old commit
    .venv/bin/python bench/request_digest.py > after.txt      # on the new one
    diff before.txt after.txt                                 # empty: the cache figures cannot have moved

Each library scenario is replayed with ``reasonix replay``'s code; every chat request body the in-process emulator
receives is hashed in order. One line per scenario: name, number of requests, sha256 of the bodies joined by NUL.

Two things in a replay are volatile by nature and are blanked before hashing: the replay's temporary workspace path
(it appears in tool output such as tracebacks; a user's workspace path is stable) and test-runner timings
(``Ran 3 tests in 0.003s``). Everything else is hashed as sent.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scenario_figures import recording_bodies  # noqa: E402

from orchestrator.replay.runner import replay  # noqa: E402
from scenarios.format import load_scenario  # noqa: E402

_VOLATILE = (
    (re.compile(rb"/tmp/reasonix-replay-[A-Za-z0-9_.-]+?-[a-z0-9_]{8}"), b"<workspace>"),
    (re.compile(rb"in [0-9]+\.[0-9]+s"), b"in <t>s"),
)


def stable(body: bytes) -> bytes:
    for pattern, replacement in _VOLATILE:
        body = pattern.sub(replacement, body)
    return body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", type=Path, help="scenario files (default: the whole library)")
    args = parser.parse_args()
    paths = args.scenarios or sorted((ROOT / "scenarios" / "library").glob("*.json"))
    for path in paths:
        captured: list[bytes] = []
        with recording_bodies(captured):
            report = replay(load_scenario(path))
        digest = hashlib.sha256(b"\0".join(stable(b) for b in captured)).hexdigest()
        status = "ok" if report.ok else "FAILED"
        print(f"{path.stem:28} {len(captured):4d} requests  {digest}  {status}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
