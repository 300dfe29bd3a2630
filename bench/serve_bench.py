"""The service's own overhead per event: what ``reasonix serve`` adds to a goal for each event it numbers, stores and
fans out, and how fast its SSE stream delivers events to 1 and 10 subscribers over loopback HTTP.

    .venv/bin/python bench/serve_bench.py [--events 20000]

Printed:
- ``append``: µs per event on the goal's own task (number, append to ``serve-events.jsonl``, send to each live
  subscriber's channel) with 0, 1 and 10 subscribers draining: the service's cost per event, added to the bare runner.
- ``sse``: events per second delivered through the real app (hypercorn's trio worker, starlette's streaming response)
  to 1 and 10 concurrent HTTP subscribers, each counted once every subscriber has received every event.
- ``goal``: one scripted goal on the emulator run bare (``create_runner``) and through the service (``POST /api/goals``
  to its end), wall time and its event count, so the added µs per event can be read against a real run.
Wall-clock figures on a shared machine: rerun before comparing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from orchestrator.serve.app import create_app, serve_app  # noqa: E402
from orchestrator.serve.events import EventLog  # noqa: E402
from orchestrator.serve.manager import open_manager  # noqa: E402
from tests.orchestrator.goal_support import goal_env, new_runner  # noqa: E402
from tests.orchestrator.serve.support import open_service, simple_script, workspace  # noqa: E402

TOKEN = "bench"
EVENT = {"kind": "stream", "session": "executor", "event": {"kind": "content", "text": "hello world " * 3}}


async def append_us(events: int, subscribers: int, root: Path) -> float:
    log = EventLog(root / f"append-{subscribers}.jsonl", buffer=events + 1)
    log.open()
    channels = [c for c in (log.subscribe() for _ in range(subscribers)) if c is not None]
    async with trio.open_nursery() as nursery:
        for channel in channels:

            async def drain(channel: trio.MemoryReceiveChannel[tuple[int, dict[str, object]]] = channel) -> None:
                async for _ in channel:
                    pass

            nursery.start_soon(drain)
        start = time.perf_counter()
        for _ in range(events):
            log.append(EVENT)
        elapsed = time.perf_counter() - start
        log.close()
    return elapsed / events * 1e6


async def sse_rate(events: int, subscribers: int, root: Path) -> float:
    async with open_manager(state_dir=root / f"state-{subscribers}", env={}) as manager, trio.open_nursery() as n:
        stop = trio.Event()
        url = await n.start(serve_app, create_app(manager, TOKEN), "127.0.0.1", 0, stop.wait)
        ws = workspace(root, f"sse-{subscribers}")
        run_id = "bench-run"
        (ws / ".reasonix" / "runs" / run_id).mkdir(parents=True)
        (ws / ".reasonix" / "runs" / run_id / "goal.json").write_text(f'{{"run_id": "{run_id}", "objective": "b"}}')
        manager.workspaces.add(ws)
        log = manager.event_log(ws, run_id)
        log.open()
        connected = 0
        received: list[int] = []
        all_connected = trio.Event()

        async def subscriber(client: httpx.AsyncClient) -> None:
            nonlocal connected
            count = 0
            async with client.stream("GET", f"/api/runs/{run_id}/events") as response:
                connected += 1
                if connected == subscribers:
                    all_connected.set()
                async for line in response.aiter_lines():
                    if line.startswith("id: "):
                        count += 1
                    elif line == "event: end":
                        break
            received.append(count)

        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
            async with trio.open_nursery() as readers:
                for _ in range(subscribers):
                    readers.start_soon(subscriber, client)
                await all_connected.wait()
                await trio.sleep(0.2)  # the responses' generators are subscribed
                start = time.perf_counter()
                for i in range(events):
                    log.append(EVENT)
                    if i % 64 == 0:
                        await trio.lowlevel.checkpoint()  # let the subscribers run, as a goal's awaits do
                log.close()
            elapsed = time.perf_counter() - start
        stop.set()
    assert received == [events] * subscribers, (received, log.dropped)
    return events / elapsed


async def goal_times(root: Path) -> tuple[float, float, int]:
    ws = workspace(root, "bare")
    events: list[object] = []
    async with goal_env(simple_script()) as (_, client):
        from orchestrator.review.reviewer import AutoApprove

        runner = new_runner(client, ws, "Say hello", reviewer=AutoApprove(), events=events)
        start = time.perf_counter()
        await runner.run()
        bare = time.perf_counter() - start
        runner.store.close()
    ws2 = workspace(root, "served")
    async with open_service(root / "svc", simple_script()) as svc:
        start = time.perf_counter()
        run_id = await svc.start(ws2, review=False)
        await svc.wait_for(run_id)
        served = time.perf_counter() - start
    return bare, served, len(events)


async def main(events: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for subscribers in (0, 1, 10):
            runs = [await append_us(events, subscribers, root / f"a{subscribers}-{r}") for r in range(3)]
            print(f"append  {subscribers:>2} subscribers: {statistics.median(runs):7.1f} µs/event (median of 3)")
        for subscribers in (1, 10):
            rate = await sse_rate(events, subscribers, root / f"s{subscribers}")
            print(f"sse     {subscribers:>2} subscribers: {rate:9.0f} events/s delivered to each")
        await goal_times(root / "warm-up")  # imports, the tokenizer, the first sockets
        bare, served, count = await goal_times(root / "goal")
        print(
            f"goal    bare {bare * 1000:.0f} ms, through the service {served * 1000:.0f} ms "
            f"(start to end over HTTP, polling), {count} events"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    args = parser.parse_args()
    trio.run(main, args.events)
