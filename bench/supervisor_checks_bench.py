"""What the supervisor's own checks cost per step, on this machine.

    .venv/bin/python bench/supervisor_checks_bench.py [--repeat 20]

* ``verify``      : milliseconds per ``run_verify`` of one trivial command (``true``), against a bare
                    ``trio.run_process`` of the same command: the overhead of process-group handling and bounding;
* ``verify big``  : one command printing 5 MB, bounded to 4000 characters;
* ``normalize``   : ``normalize_failure`` on a realistic 4 KB pytest failure, and on a noisy 100 KB text;
* ``fingerprint`` : ``workspace_fingerprint`` of 200 files of 4 KB.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import trio

from orchestrator.policy.stuck import normalize_failure, workspace_fingerprint
from orchestrator.policy.verify import run_verify
from plans.schema import Step, VerifyCommand


def _step(command: str) -> Step:
    return Step(id="B1", title="bench", instructions="bench", verify=(VerifyCommand(command=command),))


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.2f} ms, max {max(samples) * 1000:.2f} ms"


async def _verify(repeat: int, workspace: Path) -> None:
    bare: list[float] = []
    ours: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        await trio.run_process(["bash", "-c", "true"], cwd=workspace)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        await run_verify(_step("true"), workspace)
        ours.append(time.perf_counter() - start)
    print(f"verify      bare run_process  {_ms(bare)}")
    print(f"verify      run_verify        {_ms(ours)}")
    big: list[float] = []
    for _ in range(max(repeat // 4, 3)):
        start = time.perf_counter()
        (outcome,) = await run_verify(_step("head -c 5000000 /dev/zero | tr '\\0' x; echo"), workspace)
        big.append(time.perf_counter() - start)
    print(f"verify big  5 MB output       {_ms(big)}, kept {len(outcome.output)} chars")


def _normalize(repeat: int) -> None:
    failure = (
        "F.                                                      [100%]\n"
        + "".join(
            f"/tmp/pytest-of-dev/pytest-{i}/test_calc.py:{i * 7}: in test_add\n"
            f"E   AssertionError: <calc.Adder object at 0x7f3a2c1b{i:04x}> took 0.{i:03d}s\n"
            for i in range(40)
        )
    )[:4000]
    noisy = ("\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y[3-0x1f] - 12.5ms tmpab12cd34 deadbeef1234\n" * 1300)[
        :100_000
    ]
    for name, text in (("4 KB pytest", failure), ("100 KB noisy", noisy)):
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            normalize_failure(text)
            samples.append(time.perf_counter() - start)
        print(f"normalize   {name:<17} {_ms(samples)}")


def _fingerprint(repeat: int, workspace: Path) -> None:
    names = []
    for i in range(200):
        path = workspace / "src" / f"m{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# module {i}\n" + "x = 1\n" * 680)
        names.append(f"src/m{i}.py")
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        workspace_fingerprint(workspace, names)
        samples.append(time.perf_counter() - start)
    print(f"fingerprint 200 files x 4 KB  {_ms(samples)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        trio.run(_verify, args.repeat, workspace)
        _normalize(args.repeat)
        _fingerprint(args.repeat, workspace)


if __name__ == "__main__":
    main()
