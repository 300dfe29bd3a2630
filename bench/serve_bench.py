"""``reasonix serve`` with many viewers, before and after, side by side in one run: each side is a child process
serving one code tree (``before``: ``orchestrator/``, ``sessions/``, ``plans/``, ``scenarios/`` and ``tests/`` of
``--before`` out of git; ``after``: this checkout), and the viewers are another process, as browsers would be.

    .venv/bin/python bench/serve_bench.py [--viewers 100] [--words 1500] [--repeat 3] [--before 9bfc8b7] [--smoke]

Printed, per side (the median of ``--repeat`` runs, the two sides taking turns):
- ``goal 0`` / ``goal N``: one scripted goal on the emulator, from approving its plan to its end, with no viewer and
  with N viewers streaming its events from before the approval (``GET /api/runs/ID/events``); its stream deltas come
  as fast as the emulator writes them (``--words`` words in each of the executor's replies and the verdict), so the
  goal is as busy as a goal gets; and the ratio of the two (the goal: ≤ 1.5×).
- ``stream N``: the finished run's whole stream (its stored events, then ``end``) to N viewers at once: from the
  first connect to the last byte.
- ``api p50/p99``: ``GET /api/runs/ID`` from a process of its own every 20 ms while the goal runs (idle: 0 viewers,
  loaded: N), and ``detail``: the same call made in the service's process, one at a time on a finished run.
Every viewer checks it got every event, in order, once. Wall-clock figures on a shared machine, with the load average.
``--smoke`` (CI, ``bench/smoke.py``): this checkout's side only, 2 viewers, 20 words, one run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "test-token-123"
"""The token of the service in ``tests/orchestrator/serve/support.py``."""
END = b"event: end\ndata: {}\n\n"
TREE = ("orchestrator", "sessions", "plans", "scenarios", "tests")


# ------------------------------------------------------------------------------------------------ the viewers


async def _view(host: str, port: int, run_id: str, out: list[bytes], connected: Any) -> None:
    """One viewer: the run's stream, every byte kept, until ``end``."""
    import trio

    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        headers = f"Host: {host}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n"
        request = f"GET /api/runs/{run_id}/events HTTP/1.0\r\n{headers}\r\n"
        await stream.send_all(request.encode())
        first = await stream.receive_some(65536)
        connected()
        chunks = [first]
        while not b"".join(chunks[-2:]).endswith(END):
            data = await stream.receive_some(65536)
            if not data:
                break  # dropped before its end (the service before this change dropped a viewer behind by 4,096)
            chunks.append(data)
        out.append(b"".join(chunks))


def _check(raw: bytes) -> int:
    """The events a viewer got: ids 1, 2, 3 … once each and in order, then ``end``; -1 for a viewer dropped."""
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"), head[:80]
    ids = [int(m) for m in re.findall(rb"^id: (\d+)$", body, re.MULTILINE)]
    assert ids == list(range(1, len(ids) + 1)), ids[:10]
    return len(ids) if body.endswith(END) else -1


async def viewers_main(url: str, run_id: str, count: int, poll: bool) -> None:
    """Open ``count`` streams; say ``connected`` once all have their headers; poll the run's API every 20 ms until it
    is no longer live and the streams have ended; print what each got, how long the streams took and the latencies."""
    import httpx
    import trio

    host, port = url.removeprefix("http://").rsplit(":", 1)
    bodies: list[bytes] = []
    latencies: list[float] = []
    done_connecting = trio.Event()
    opened = 0

    def connected() -> None:
        nonlocal opened
        opened += 1
        if opened == count:
            done_connecting.set()

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        async with trio.open_nursery() as streams:
            for _ in range(count):
                streams.start_soon(_view, host, int(port), run_id, bodies, connected)
            if count:
                await done_connecting.wait()
            print("connected", flush=True)
            if poll:

                async def poller() -> None:
                    headers = {"Authorization": f"Bearer {TOKEN}"}
                    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
                        while True:
                            t0 = time.perf_counter()
                            response = await client.get(f"/api/runs/{run_id}")
                            latencies.append(time.perf_counter() - t0)
                            assert response.status_code == 200, response.text
                            if not response.json()["live"]:
                                return
                            await trio.sleep(0.02)

                nursery.start_soon(poller)
        streamed = time.perf_counter() - start
    events = []
    for body in bodies:
        try:
            events.append(_check(body))
        except AssertionError as exc:
            print(f"a viewer got a bad stream: {exc}", file=sys.stderr)
            events.append(-2)
    print(json.dumps({"streamed_s": streamed, "events": events, "latencies": latencies}), flush=True)


# ------------------------------------------------------------------------------------------------ one side


class Remote:
    """An emulator in another process, where the service expects one of its own."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url


def _script(markers: list[str], words: int) -> Any:
    from scenarios.emulator import Script
    from tests.orchestrator.serve.support import executor_replies, planner_replies

    text = "word " * words
    sessions = []
    for marker in markers:
        plan, verdict = planner_replies()
        write, report = executor_replies()
        replies = [plan, {**write, "reasoning": text}, {**report, "reasoning": text}, {**verdict, "reasoning": text}]
        sessions.append({"key": marker, "system_contains": marker, "replies": replies})
    return Script.model_validate({"sessions": sessions})


async def side_main(viewers: int, words: int, repeat: int) -> None:
    """Serve goals from this process's code tree and print the figures as one JSON line."""
    import trio

    from orchestrator.serve.runs import run_detail
    from tests.orchestrator.serve.support import open_service, workspace

    async def spawn_viewers(url: str, run_id: str, count: int, poll: bool = False) -> trio.Process:
        argv = [sys.executable, __file__, "--viewers-of", url, run_id, str(count), "poll" if poll else "-"]
        return await trio.lowlevel.open_process(argv, stdout=subprocess.PIPE, cwd=ROOT)

    async def lines(process: trio.Process) -> list[str]:
        assert process.stdout is not None
        data = b""
        while chunk := await process.stdout.receive_some():
            data += chunk
        await process.wait()
        assert process.returncode == 0
        return data.decode().splitlines()

    async def until_connected(process: trio.Process) -> bytes:
        assert process.stdout is not None
        data = b""
        while b"connected\n" not in data:
            data += await process.stdout.receive_some()
        return data

    from tests.orchestrator.run_support import emulator_process

    markers = [f"marker-{n}" for n in range(2 * repeat + 1)]
    script = _script(markers, words)
    keys = ("goal_0", "goal_n", "p99_0", "p99_n", "p50_n", "p50_0", "dropped")
    figures: dict[str, list[float]] = {key: [] for key in keys}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        served = script.model_dump(mode="json", exclude_defaults=True)
        with emulator_process(served, root, dict(os.environ)) as emulator_url:  # its own process, as DeepSeek is
            async with open_service(root, script, emulator=Remote(emulator_url)) as svc:  # type: ignore[arg-type]
                last = ""
                for index, marker in enumerate(markers):
                    count = viewers if index % 2 else 0  # the warm-up (index 0) without viewers
                    run_id = await svc.start(workspace(root, marker, marker=marker), review=True)
                    await svc.wait_for(run_id, awaiting_review=True)
                    process = await spawn_viewers(svc.url, run_id, count) if count else None
                    if process is not None:
                        await until_connected(process)
                    poller = await spawn_viewers(svc.url, run_id, 0, poll=True)
                    seen = await until_connected(poller)
                    start = time.perf_counter()
                    assert (await svc.review(run_id, decision="approve")).status_code == 200
                    live = svc.manager.live.get(run_id)
                    if live is not None:
                        await live.done.wait()
                    took = time.perf_counter() - start
                    if process is not None:
                        result = json.loads((await lines(process))[-1])
                        got = result["events"]
                        assert len(got) == count and len(set(got) - {-1, -2}) == 1, got
                        figures["dropped"].append(got.count(-1) + got.count(-2))
                    out = (seen.decode() + "\n".join(await lines(poller))).splitlines()
                    result = json.loads(out[-1])
                    if index == 0:
                        continue  # the warm-up: imports, the tokenizer, the first sockets
                    key = "n" if count else "0"
                    figures[f"goal_{key}"].append(took)
                    ms = sorted(x * 1000 for x in result["latencies"])
                    figures[f"p50_{key}"].append(statistics.median(ms))
                    figures[f"p99_{key}"].append(ms[min(len(ms) - 1, round(len(ms) * 0.99))])
                    last = run_id
                streams = []
                for _ in range(repeat):
                    process = await spawn_viewers(svc.url, last, viewers)
                    result = json.loads((await lines(process))[-1])
                    streams.append(result["streamed_s"])
                    events = max(result["events"])
                details = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    run_detail(svc.manager, last)
                    details.append((time.perf_counter() - t0) * 1000)
    medians = {key: statistics.median(values) for key, values in figures.items()}
    medians.update(stream_n=statistics.median(streams), detail_ms=statistics.median(details), events=events)
    print(json.dumps(medians), flush=True)


# ------------------------------------------------------------------------------------------------ both sides


def run_side(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    argv = [sys.executable, __file__, "--side", str(tree), "--viewers", str(args.viewers)]
    argv += ["--words", str(args.words), "--repeat", "1"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    if proc.returncode != 0:
        log = Path(tempfile.gettempdir()) / "serve_bench-side.err"
        log.write_text(proc.stderr)
        raise SystemExit(f"the {tree} side failed (its whole error output: {log}):\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main(args: argparse.Namespace) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}, {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"after": ROOT}
        if not args.smoke:
            before = Path(tmp)
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, *TREE], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
            trees = {"before": before, **trees}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(args.repeat):  # the two sides take turns, so a drift of the machine's speed hits both
            for name, tree in trees.items():
                runs[name].append(run_side(tree, args))
    sides = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    n = args.viewers
    rows = [
        ("goal, 0 viewers (s)", "goal_0", 3),
        (f"goal, {n} viewers (s)", "goal_n", 3),
        (f"goal {n} / goal 0", None, 2),
        (f"stream of the finished run to {n} viewers (s)", "stream_n", 3),
        ("api p50, 0 viewers (ms)", "p50_0", 1),
        ("api p99, 0 viewers (ms)", "p99_0", 1),
        (f"api p50, {n} viewers (ms)", "p50_n", 1),
        (f"api p99, {n} viewers (ms)", "p99_n", 1),
        ("run detail in-process (ms)", "detail_ms", 2),
        (f"viewers of the live goal dropped (of {n})", "dropped", 0),
    ]
    print(f"{int(sides['after']['events'])} events a run, medians of {args.repeat} runs a side, the sides in turn")
    if "before" not in sides:
        print(f"{'':46} {'after':>9}   (--smoke: this checkout only)")
    else:
        print(f"{'':46} {'before':>9} {'after':>9} {'after/before':>13}")
    for label, key, digits in rows:
        figures = {name: side["goal_n"] / side["goal_0"] if key is None else side[key] for name, side in sides.items()}
        a, b = figures["after"], figures.get("before")
        if b is None:
            print(f"{label:46} {a:9.{digits}f}")
            continue
        ratio = f"{a / b:12.2f}×" if b else ""
        print(f"{label:46} {b:9.{digits}f} {a:9.{digits}f} {ratio}")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--words", type=int, default=1500, help="words in each long reply (one stream event each)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", default="9bfc8b7", help="the git commit whose serve code is 'before'")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: this checkout only, 2 viewers, 20 words")
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--viewers-of", nargs=4, metavar=("URL", "RUN", "COUNT", "POLL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.viewers, args.words, args.repeat = 2, 20, 1
    if args.viewers_of:
        import trio

        url, run_id, count, poll = args.viewers_of
        trio.run(viewers_main, url, run_id, int(count), poll == "poll")
    elif args.side:
        sys.path.insert(0, str(args.side))
        import trio

        trio.run(side_main, args.viewers, args.words, 1)
    else:
        main(args)
