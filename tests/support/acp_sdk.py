"""Driving ``reasonix acp`` with the official SDK's client side from a trio test: the scenario is written to a file,
``tests/support/acp_sdk_client.py`` (asyncio, in a process of its own) runs it against the agent and prints the
transcript, which comes back here as a list of entries."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio

from tests.orchestrator.run_support import ROOT

CLIENT = Path(__file__).with_name("acp_sdk_client.py")


def agent_command(base_url: str) -> list[str]:
    return [sys.executable, "-m", "orchestrator", "acp", "--base-url", base_url]


async def run_sdk_client(scenario: dict[str, Any], tmp_path: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Run ``scenario`` (see the client's docstring) and return its transcript; the SDK must have logged no error."""
    path = trio.Path(tmp_path / f"scenario-{len(list(await trio.Path(tmp_path).glob('scenario-*.json')))}.json")
    await path.write_text(json.dumps({"cwd": str(ROOT), "env": env, **scenario}), encoding="utf-8")
    with trio.fail_after(300):
        done = await trio.run_process(
            [sys.executable, str(CLIENT), str(path)], capture_stdout=True, capture_stderr=True, env=env, check=False
        )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr
    transcript: list[dict[str, Any]] = json.loads(done.stdout)
    assert [e for e in transcript if e["kind"] == "sdk_error"] == [], stderr
    return transcript


def updates(transcript: list[dict[str, Any]], after: int = 0) -> list[dict[str, Any]]:
    """The ``session/update`` bodies from entry ``after`` on."""
    return [e["update"] for e in transcript[after:] if e["kind"] == "update"]


def results(transcript: list[dict[str, Any]], op: str) -> list[dict[str, Any]]:
    """Each ``op`` step's result or error entry, in order."""
    return [e for e in transcript if e["kind"] in ("result", "error") and e["op"] == op]


def index_of(transcript: list[dict[str, Any]], op: str, nth: int = 0) -> int:
    """Where the ``nth`` ``op`` step ended in the transcript."""
    found = [i for i, e in enumerate(transcript) if e["kind"] in ("result", "error") and e["op"] == op]
    return found[nth]
