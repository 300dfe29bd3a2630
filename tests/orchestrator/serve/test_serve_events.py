"""The event stream: the same objects ``reasonix goal --json`` prints, numbered; a reconnect with Last-Event-ID misses
none (many viewers, slow ones and batching: ``test_serve_fanout.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

from orchestrator.events import GOAL_EVENT_KINDS

from ..run_support import clean_env, emulator_process, json_lines, reasonix
from .support import open_service, read_sse, simple_script, workspace


def _shape(event: dict[str, Any]) -> tuple[Any, ...]:
    """What must match between the two streams: the kind, the session, and the goal fields that are not timings,
    costs or paths."""
    keep = ("state", "previous", "decision", "automatic", "step_id", "status", "ok", "revision", "title")
    return (event.get("kind"), event.get("session"), *(event.get(k) for k in keep))


@pytest.mark.bwrap
async def test_the_stream_carries_the_events_reasonix_goal_json_prints(tmp_path: Path) -> None:
    script = simple_script()
    cli_ws = workspace(tmp_path / "cli")
    env = clean_env(tmp_path / "cli-home")
    with emulator_process(script.model_dump(mode="json", exclude_defaults=True), tmp_path, env) as url:
        proc = await trio.to_thread.run_sync(
            lambda: reasonix(
                "goal", "Say hello", "--json", "--yes", "--workspace", str(cli_ws), "--base-url", url, env=env
            )
        )
    assert proc.returncode == 0, proc.stderr
    printed = json_lines(proc.stdout)
    ws = workspace(tmp_path / "svc")
    async with open_service(tmp_path, script) as svc:
        run_id = await svc.start(ws, review=False)
        await svc.wait_for(run_id)
        streamed, ended = await read_sse(svc.client, run_id)
    assert ended
    assert [kind for _, kind, _ in streamed] == [e["kind"] for e in printed]
    assert [_shape(data) for _, _, data in streamed] == [_shape(e) for e in printed]
    assert len(printed) > 20 and {"stream", "usage", "step_verified", "summary"} <= {e["kind"] for e in printed}


async def test_a_reconnect_with_last_event_id_misses_no_event_and_repeats_none(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        first, ended = await read_sse(svc.client, run_id, limit=5)  # disconnect mid-run
        assert not ended and len(first) == 5
        assert (await svc.review(run_id, decision="approve")).status_code == 200
        rest, ended = await read_sse(svc.client, run_id, after=first[-1][0])
        assert ended
        await svc.wait_for(run_id)
        full, _ = await read_sse(svc.client, run_id)
        by_query = (await svc.client.get(f"/api/runs/{run_id}/events", params={"after": 3})).text
    ids = [n for n, _, _ in first + rest]
    assert ids == list(range(1, len(full) + 1))
    assert [d for _, _, d in first + rest] == [d for _, _, d in full]
    assert by_query.startswith("id: 4\n") and by_query.endswith("event: end\ndata: {}\n\n")


async def test_every_kind_the_stream_carries_is_listed_by_event_kinds_and_tools_carry_lines(tmp_path: Path) -> None:
    """The dashboard listens for the kinds ``GET /api/event-kinds`` lists (read from the event models): none the stream
    carries is missing. A tool call's events carry its arguments bounded and the last lines of its result."""
    async with open_service(tmp_path, simple_script()) as svc:
        kinds = (await svc.client.get("/api/event-kinds")).json()
        run_id = await svc.start(workspace(tmp_path / "ws"), review=False)
        await svc.wait_for(run_id)
        streamed, ended = await read_sse(svc.client, run_id)
    assert ended and kinds["goal"] == list(GOAL_EVENT_KINDS)
    assert {kind for _, kind, _ in streamed} <= {*kinds["goal"], *kinds["session"], *kinds["service"]}
    started = [data for _, kind, data in streamed if kind == "tool_started"]
    finished = [data for _, kind, data in streamed if kind == "tool_finished"]
    assert started and all(isinstance(d["args_shown"], dict) and d["args_shown"] for d in started)
    assert finished and all(d["tail"] and d["lines"] >= 1 for d in finished)
