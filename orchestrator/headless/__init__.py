"""Headless runs (``reasonix -p``): one executor conversation without a terminal, its events as stream-json lines.
``events`` defines every line (the same objects the Python API yields), ``translate`` makes them from a session's
events, ``conversation`` drives the executor conversation (:mod:`orchestrator.conversation`) and makes its lines,
and ``output`` the text / json / stream-json writers and the stream-json input reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.headless.conversation import HeadlessConversation, HeadlessOptions
    from orchestrator.headless.events import SCHEMA_VERSION, ResultLine, StreamJsonEvent, json_schema, parse_event

__all__ = [
    "SCHEMA_VERSION",
    "HeadlessConversation",
    "HeadlessOptions",
    "ResultLine",
    "StreamJsonEvent",
    "json_schema",
    "parse_event",
]

_HOME = {
    "SCHEMA_VERSION": "events",
    "HeadlessConversation": "conversation",
    "HeadlessOptions": "conversation",
    "ResultLine": "events",
    "StreamJsonEvent": "events",
    "json_schema": "events",
    "parse_event": "events",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
