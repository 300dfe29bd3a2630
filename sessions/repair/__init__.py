"""Tool-call repair (DESIGN §4 and §5): make a misbehaving model's tool calls executable.

Repairs change what is *executed*, never the bytes that are re-sent: nothing here mutates or re-serializes an
:class:`~sessions.wire.messages.AssistantMessage`. The one entry point per assistant reply is :func:`prepare_calls`.
"""

from __future__ import annotations

from sessions.repair.errors import ModelArgumentsError, RepairError, ToolSchemaError
from sessions.repair.flatten import FlatMap, flatten_args, flatten_schema, unflatten_args
from sessions.repair.prepare import (
    BatchItem,
    ImmediateResult,
    PreparedBatch,
    RepairedCall,
    RepairEvent,
    RepairKind,
    prepare_calls,
    repair_note,
)
from sessions.repair.scavenge import ScavengedCall, scavenge_calls
from sessions.repair.storm import StormGuard, StormVerdict
from sessions.repair.truncation import ParsedArguments, parse_arguments

__all__ = [
    "BatchItem",
    "FlatMap",
    "ImmediateResult",
    "ModelArgumentsError",
    "ParsedArguments",
    "PreparedBatch",
    "RepairError",
    "RepairEvent",
    "RepairKind",
    "RepairedCall",
    "ScavengedCall",
    "StormGuard",
    "StormVerdict",
    "ToolSchemaError",
    "flatten_args",
    "flatten_schema",
    "parse_arguments",
    "prepare_calls",
    "repair_note",
    "scavenge_calls",
    "unflatten_args",
]
