"""What the repair layer reads of the session's tools, and the checks a call written as text must pass to be taken.

A call found in text (:mod:`sessions.repair.scavenge`) is only a candidate: prose can name a tool by accident. It is
taken only when its tool is one of the session's and its arguments validate against that tool's argument model,
after the same nesting (:func:`~sessions.repair.flatten.unflatten_args`) and the same pydantic coercion that every
call gets when it is dispatched (:func:`validates`). Before that, the raw text bodies of DSML ``string="true"``
parameters are trimmed where the parameter is a path or an identifier, and kept verbatim where it is content
(:func:`trim_bodies`): ``<parameter name="path" string="true">\\nsrc/app.py\\n</parameter>`` reads ``src/app.py``.

The repair layer imports nothing of the tools package: :class:`ToolTable` is the shape of
:class:`sessions.tools.ToolRegistry`, and :class:`OfferedTool` of :class:`sessions.tools.Tool`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

_IDENTIFIER_NAME = re.compile(
    r"(?:^|[._])(?:path|paths|file|files|filename|filepath|dir|directory|cwd|root|url|uri|id|ids|name|names|ref"
    r"|branch|tag|key|glob|include|exclude|mode|status|verdict|language|lang|encoding)$",
    re.IGNORECASE,
)
_SCALAR_TYPES = frozenset({"integer", "number", "boolean"})


class OfferedTool(Protocol):
    """One of the session's tools as the repair layer sees it."""

    @property
    def args_model(self) -> type[BaseModel]: ...

    @property
    def storm_exempt(self) -> bool:
        """Calling it again with the same arguments is its purpose (polling): the storm guard ignores it."""
        ...


class ToolTable(Protocol):
    """The session's tools by name."""

    def get(self, name: str, /) -> OfferedTool | None: ...


def validates(tool: OfferedTool, args: Mapping[str, Any]) -> bool:
    """The (nested) arguments pass the tool's argument model, as they would when the call is dispatched."""
    try:
        tool.args_model.model_validate(dict(args))
    except (ValidationError, ValueError, TypeError):
        return False
    return True


def trim_bodies(tool: OfferedTool, args: dict[str, Any], bodies: tuple[str, ...]) -> dict[str, Any]:
    """``args`` with the DSML string bodies named in ``bodies`` stripped of surrounding whitespace where the
    parameter is a path or an identifier; content parameters (``content``, ``old``, ``command`` …) stay verbatim."""
    if not bodies:
        return args
    properties = _properties(tool.args_model)
    out = dict(args)
    for key in bodies:
        value = out.get(key)
        if isinstance(value, str) and _is_identifier(key, properties.get(key)):
            out[key] = value.strip()
    return out


def _is_identifier(name: str, schema: Any) -> bool:
    if _IDENTIFIER_NAME.search(name):
        return True
    if not isinstance(schema, dict):
        return False
    if "enum" in schema or "const" in schema or "format" in schema:
        return True
    kinds = schema.get("type")
    options = schema.get("anyOf")
    if isinstance(options, list):
        kinds = [o.get("type") for o in options if isinstance(o, dict)]
        if any(isinstance(o, dict) and "enum" in o for o in options):
            return True
    if isinstance(kinds, str):
        kinds = [kinds]
    return isinstance(kinds, list) and bool(kinds) and all(k in _SCALAR_TYPES or k == "null" for k in kinds)


@lru_cache(maxsize=256)
def _properties(model: type[BaseModel]) -> dict[str, Any]:
    try:
        schema = model.model_json_schema()
    except Exception:  # noqa: BLE001 - a model pydantic cannot describe simply gets the name rule only
        return {}
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}
