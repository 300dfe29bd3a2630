"""Errors of the repair layer, named for who is at fault."""

from __future__ import annotations


class RepairError(Exception):
    """Base of every error raised by :mod:`sessions.repair`."""


class ModelArgumentsError(RepairError):
    """The model's fault: a tool call's arguments cannot become a JSON object, even after repair.

    The message is written for the model: it goes back as the tool result.
    """


class ToolSchemaError(RepairError):
    """The tool author's fault: a schema cannot be flattened (for example a dotted name collides with a parameter)."""
