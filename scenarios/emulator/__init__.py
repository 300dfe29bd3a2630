"""The DeepSeek API emulator: a loopback server with honest prefix-cache accounting, scripted replies and faults.

In-process (tests)::

    async with open_emulator(script=Script.load("s.json"), cache_unit=128) as emu:
        ... httpx against emu.base_url ...; emu.stats(); emu.reset()

Standalone: ``reasonix emulate``. The script format: ``scenarios/README.md``; the cache accounting: DESIGN §6.
"""

from scenarios.emulator.app import DEFAULT_MODELS, Emulator
from scenarios.emulator.errors import ApiError, EmulatorError, ScriptExhausted, ScriptInvalid
from scenarios.emulator.latency import LatencyModel
from scenarios.emulator.script import (
    DropFault,
    HttpStatusFault,
    ReplySpec,
    Script,
    SessionSpec,
    ToolCallSpec,
    fingerprint,
)
from scenarios.emulator.server import RunningEmulator, open_emulator, serve
from scenarios.emulator.validation import ModelLimits

__all__ = [
    "DEFAULT_MODELS",
    "ApiError",
    "DropFault",
    "Emulator",
    "EmulatorError",
    "HttpStatusFault",
    "LatencyModel",
    "ModelLimits",
    "ReplySpec",
    "RunningEmulator",
    "Script",
    "ScriptExhausted",
    "ScriptInvalid",
    "SessionSpec",
    "ToolCallSpec",
    "fingerprint",
    "open_emulator",
    "serve",
]
