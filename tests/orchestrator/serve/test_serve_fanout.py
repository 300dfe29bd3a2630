"""Many viewers of one run: each event serialised once and sent as the same bytes to all, live events gathered into
one write a short window long (the run's end sent at once), a finished run's frames sent in batches, and the run's
summary read once and read again when the run changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from orchestrator.serve.events import END_FRAME, EventLog, sse_frames

from .support import open_service, simple_script, workspace


def _parse(body: bytes) -> list[tuple[int, str, dict[str, Any]]]:
    """The events of a stream's bytes (pings left out), checking each frame's shape; the stream must end with end."""
    assert body.endswith(END_FRAME)
    out = []
    for block in body.decode().split("\n\n")[:-2]:
        lines = [line for line in block.split("\n") if not line.startswith(":")]
        if not lines:
            continue
        number, kind, data = lines
        out.append((int(number.removeprefix("id: ")), kind.removeprefix("event: "), json.loads(data[6:])))
    return out


def _without_pings(body: bytes) -> bytes:
    return body.replace(b": ping\n\n", b"")


def _stored(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """The run's events file, read as the stream before this change framed it: one frame an event, in file order."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out.append((record["id"], record["data"]["kind"], record["data"]))
    return out


async def _view(client: httpx.AsyncClient, run_id: str, into: list[bytes], ready: trio.Event | None = None) -> None:
    async with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        chunks = []
        async for chunk in response.aiter_raw():
            if ready is not None:
                ready.set()
            chunks.append(chunk)
    into.append(b"".join(chunks))


@pytest.mark.bwrap
async def test_every_viewer_early_late_or_after_the_end_gets_the_same_events_in_order(tmp_path: Path) -> None:
    """Live viewers get the events gathered into fewer writes; the events, their order and their bytes are the same
    for a viewer there from the start, one that came mid-run (no Last-Event-ID: it gets the stored ones first) and one
    that came after the end, and they are the events of the run's file, each once."""
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script(), ping_s=0.05) as svc:
        run_id = await svc.start(ws)
        early: list[bytes] = []
        late: list[bytes] = []
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(_view, svc.client, run_id, early)
            await svc.wait_for(run_id, awaiting_review=True)
            ready = trio.Event()
            nursery.start_soon(_view, svc.client, run_id, late, ready)
            await ready.wait()
            assert (await svc.review(run_id, decision="approve")).status_code == 200
        after: list[bytes] = []
        await _view(svc.client, run_id, after)
        events_file = svc.manager.event_log(ws, run_id).path
    stored = _stored(events_file)
    assert [n for n, _, _ in stored] == list(range(1, len(stored) + 1)) and len(stored) > 50
    assert stored[-1][1] == "summary"
    for body in [*early, *late, *after]:
        assert _parse(body) == stored
        assert _without_pings(body) == _without_pings(after[0])


async def test_a_burst_goes_to_a_waiting_viewer_in_one_write_and_the_end_at_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    log = EventLog(tmp_path / "serve-events.jsonl")
    log.open()
    log.append({"kind": "a"})
    writes: list[tuple[float, bytes]] = []

    async def viewer() -> None:
        async for chunk in sse_frames(log, 0, ping_s=3600, coalesce_s=0.025):
            writes.append((trio.current_time(), chunk))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(viewer)
        await trio.testing.wait_all_tasks_blocked()
        assert [chunk for _, chunk in writes] == [b'id: 1\nevent: a\ndata: {"kind":"a"}\n\n']
        for n in range(20):  # 20 events within the window: one write
            log.append({"kind": "stream", "n": n})
            await trio.sleep(0.001)
        await trio.sleep(0.1)
        log.append({"kind": "last"})
        await trio.sleep(0.001)
        closed_at = trio.current_time()
        log.close()
    assert len(writes) == 4
    assert writes[1][1].count(b"\n\n") == 20 and writes[1][1].startswith(b"id: 2\n")
    assert writes[2][1].startswith(b"id: 22\nevent: last\n") and writes[3][1] == END_FRAME
    assert writes[2][0] == writes[3][0] == closed_at  # the window was cut short by the end: nothing waits
    assert writes[1][0] - writes[0][0] == pytest.approx(0.025)


async def test_a_viewer_that_stops_reading_holds_up_no_one_and_later_gets_every_event(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    log = EventLog(tmp_path / "serve-events.jsonl")
    log.open()
    log.append({"kind": "stream", "n": -1})
    slow = sse_frames(log, 0, ping_s=3600, coalesce_s=0.025, batch_bytes=4096)
    first = await slow.__anext__()  # then it reads nothing while the goal goes on
    fast: list[bytes] = []
    async with trio.open_nursery() as nursery:

        async def reader() -> None:
            async for chunk in sse_frames(log, 0, ping_s=3600, coalesce_s=0.025):
                fast.append(chunk)

        nursery.start_soon(reader)
        for n in range(5000):
            log.append({"kind": "stream", "n": n})  # never waits for a viewer
            if n % 100 == 0:
                await trio.sleep(0.01)
        log.close()
    rest = [chunk async for chunk in slow]
    assert len(rest) > 10 and all(len(chunk) < 4096 + 200 for chunk in rest)  # in batches
    ids = [int(line[4:]) for line in (first + b"".join(rest)).decode().split("\n") if line.startswith("id: ")]
    assert ids == list(range(1, 5002))
    assert b"".join(fast) == first + b"".join(rest)


async def test_a_finished_run_streams_its_stored_events_in_batches_then_end(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "serve-events.jsonl")
    log.open()
    for n in range(300):
        log.append({"kind": "usage", "n": n})
    log.close()
    again = EventLog(tmp_path / "serve-events.jsonl")  # a restarted service reads the same numbers
    assert again.last_id == 300
    batched = [f async for f in sse_frames(again, 1, batch_bytes=1024)]
    single = [f async for f in sse_frames(again, 1, batch_bytes=1)]
    assert len(single) == 300 and single[0] == b'id: 2\nevent: usage\ndata: {"kind":"usage","n":1}\n\n'
    assert 10 < len(batched) < 30 and b"".join(batched) == b"".join(single)
    assert batched[-1] == END_FRAME


async def test_the_frames_follow_the_file_when_it_grows_or_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "serve-events.jsonl"
    path.write_text('{"id":1,"data":{"kind":"a"}}\n{"id":2,"data":{"ki')  # a torn last line
    log = EventLog(path)
    assert log.frames_after(0)[1] == 1
    with path.open("a") as fh:
        fh.write('nd":"b"}}\n')
    assert log.frames_after(1) == (b'id: 2\nevent: b\ndata: {"kind":"b"}\n\n', 2)
    path.unlink()
    path.write_text('{"id":1,"data":{"kind":"summary","x":1}}\n')
    assert log.frames_after(0)[1] == 1 and log.last_summary() == {"kind": "summary", "x": 1}


@pytest.mark.bwrap
async def test_the_run_detail_is_read_once_and_again_when_the_run_changed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        assert (await svc.client.post(f"/api/runs/{run_id}/pause")).status_code == 200
        paused = await svc.wait_for(run_id)
        for _ in range(20):  # until the goal's task has closed its files (a journal's last flush, …)
            reads = svc.manager.runs.reads
            paused = await svc.run(run_id)
            if svc.manager.runs.reads == reads:
                break
            await trio.sleep(0.05)
        assert await svc.run(run_id) == paused and svc.manager.runs.reads == reads  # nothing changed: not read again
        assert paused["state"] == "paused" and paused["summary"]["kind"] == "summary"
        assert (await svc.client.post(f"/api/runs/{run_id}/resume", json={"budget_usd": 5})).status_code == 200
        await svc.wait_for(run_id, awaiting_review=True)
        assert (await svc.review(run_id, decision="approve")).status_code == 200
        done = await svc.wait_for(run_id)
        listed = (await svc.client.get("/api/runs")).json()["runs"]
    assert done["state"] == "complete" and done["steps_done"] == 1 and done["requests"] > paused["requests"]
    assert done["summary"] != paused["summary"] and done["summary"]["kind"] == "summary"
    assert [(r["run_id"], r["state"], r["requests"]) for r in listed] == [(run_id, "complete", done["requests"])]


async def test_the_window_grows_with_the_viewers_so_their_writes_stay_bounded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    log = EventLog(tmp_path / "serve-events.jsonl")
    log.open()
    times: list[list[float]] = [[] for _ in range(50)]

    async def viewer(into: list[float]) -> None:
        async for _ in sse_frames(log, 0, ping_s=3600, coalesce_s=0.025):
            into.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        for into in times:
            nursery.start_soon(viewer, into)
        await trio.testing.wait_all_tasks_blocked()
        assert log.viewers == 50
        start = trio.current_time()
        for n in range(200):  # 2 s of events, one each 10 ms
            log.append({"kind": "stream", "n": n})
            await trio.sleep(0.01)
        log.close()
    assert log.viewers == 0
    for into in times:
        writes = [t for t in into if t < start + 2]
        assert 30 <= len(writes) <= 40  # a write each 50 ms (25 ms a window for every 25 viewers), not each 10 ms


def test_the_frames_of_runs_not_live_are_dropped_over_the_budget_and_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.serve import events

    monkeypatch.setattr(events, "RESIDENT", events._Resident(budget=3000))
    logs = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(f'{{"id":{n},"data":{{"kind":"x","pad":"{"p" * 20}"}}}}\n' for n in range(1, 31)))
        logs.append(events.EventLog(path))  # each about 1,700 bytes of frames: two do not fit
    assert [len(log._blob) > 0 for log in logs] == [False, False, True]
    assert events.RESIDENT.total <= 3000
    whole, last = logs[0].frames_after(0, limit=1 << 20)  # read again from its file; the least recent one dropped
    assert [len(log._blob) > 0 for log in logs] == [True, False, False]
    assert last == 30 and whole == logs[2].frames_after(0, limit=1 << 20)[0]
