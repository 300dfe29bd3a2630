"""What an untrusted workspace file may do with each configuration field, declared on the field itself.

Every field of the configuration model carries ``json_schema_extra={"trust": ...}`` (made by :func:`anything`,
:func:`nothing` or :func:`tighter`), so the declaration is part of the model's JSON schema and a field added later
without one fails ``tests/orchestrator/test_config_field_trust.py``:

* ``any``: cosmetic; an untrusted file's value replaces the one below it (a reply language, a colour threshold);
* ``nothing``: an untrusted file's value is ignored (prices, the model ids, allow rules, servers, hooks, …);
* ``tighten``: an untrusted file's value counts only where it is tighter than the one below, by the comparison the
  declaration names (:data:`RULES`): a smaller limit, a stricter mode, more deny rules or hidden paths, ``false``
  for something that opens a door.

A section (a nested model such as ``[sandbox]``) declares nothing itself: its fields do. :func:`merge_untrusted`
applies the declarations when an untrusted file is merged over what is below it and says which of its keys did not
take effect, for the one notice the user reads (:mod:`orchestrator.config.trust`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from orchestrator.config.durations import parse_duration
from orchestrator.config.files import deep_merge, lookup_dotted

Trust = Literal["any", "nothing", "tighten"]
TRUST = "trust"
TIGHTER = "tighter"
ORDER = "order"


def anything() -> dict[str, Any]:
    """Cosmetic: an untrusted file may set it."""
    return {TRUST: "any"}


def nothing() -> dict[str, Any]:
    """An untrusted file's value is ignored."""
    return {TRUST: "nothing"}


def tighter(rule: str, order: Sequence[object] = ()) -> dict[str, Any]:
    """An untrusted file's value counts only where it is tighter by ``rule`` (one of :data:`RULES`); for ``order``,
    ``order`` lists the values strictest first."""
    if rule not in RULES:
        raise ValueError(f"unknown tightening rule {rule!r}; expected one of {', '.join(RULES)}")
    return {TRUST: "tighten", TIGHTER: rule, **({ORDER: list(order)} if order else {})}


def _smaller(below: Any, top: Any, _order: Sequence[object]) -> Any:
    """A limit: the smaller wins; ``None`` (no limit) is the loosest."""
    values = [v for v in (below, top) if isinstance(v, int | float) and not isinstance(v, bool)]
    return min(values) if values else None


def _smaller_bound(below: Any, top: Any, _order: Sequence[object]) -> Any:
    """A resource bound where 0 means none: the smaller positive one wins, and 0 is the loosest of all."""
    bounded = [v for v in (below, top) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    return min(bounded) if bounded else 0


def _shorter_duration(below: Any, top: Any, _order: Sequence[object]) -> Any:
    """A duration such as ``90m``: the shorter wins; ``None`` (no limit) is the loosest."""
    values = [v for v in (below, top) if isinstance(v, str)]
    return min(values, key=parse_duration) if values else None


def _false_wins(below: Any, top: Any, _order: Sequence[object]) -> Any:
    """Something that opens a door: it stays on only when both say so."""
    return bool(below) and bool(top)


def _more(below: Any, top: Any, _order: Sequence[object]) -> Any:
    """Rules or hidden paths: the file's are added, none below is removed."""
    return list(dict.fromkeys([*(below or []), *(top or [])]))


def _stricter(below: Any, top: Any, order: Sequence[object]) -> Any:
    """A mode: the one earlier in ``order`` (strictest first) wins; a value not in it is the loosest."""
    rank = {value: i for i, value in enumerate(order)}
    return top if rank.get(top, len(order)) < rank.get(below, len(order)) else below


RULES: dict[str, Callable[[Any, Any, Sequence[object]], Any]] = {
    "smaller": _smaller,
    "smaller-bound": _smaller_bound,
    "shorter-duration": _shorter_duration,
    "false-wins": _false_wins,
    "more": _more,
    "order": _stricter,
}
"""The comparisons that define "tighter", by the name a declaration gives."""


def _section(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def declarations(model: type[BaseModel], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Dotted field path -> its declaration, for every field of ``model`` and of its sections (nested models). A
    field without one maps to ``{}``."""
    out: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        section = _section(info.annotation)
        if section is not None and not isinstance(info.json_schema_extra, dict):
            out |= declarations(section, path + ".")
            continue
        extra = info.json_schema_extra
        out[path] = dict(extra) if isinstance(extra, dict) and TRUST in extra else {}
    return out


def _put(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for part in parents:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[leaf] = value


def merge_untrusted(
    below: Mapping[str, Any],
    top: Mapping[str, Any],
    defaults: Mapping[str, Any],
    model: type[BaseModel],
) -> tuple[dict[str, Any], list[str]]:
    """``top``, an untrusted workspace file, over ``below`` by each field's declaration; ``defaults`` gives the value
    below a field nobody set. Returns the merged table and the fields of ``top`` that did not take effect as written
    (ignored, or kept at the tighter value below), in the model's order."""
    out = dict(below)
    ignored: list[str] = []
    for path, declared in declarations(model).items():
        present, value = lookup_dotted(top, path)
        if not present:
            continue
        found, under = lookup_dotted(below, path)
        if not found:
            under = lookup_dotted(defaults, path)[1]
        trust = declared.get(TRUST, "nothing")  # undeclared (a test forbids it) counts as the strictest
        if trust == "any":
            merged = deep_merge(under, value) if isinstance(under, Mapping) and isinstance(value, Mapping) else value
            _put(out, path, merged)
            continue
        if trust == "tighten":
            rule = RULES[declared[TIGHTER]]
            taken = rule(under, value, declared.get(ORDER, ()))
            _put(out, path, taken)
            if declared[TIGHTER] != "more" and taken != value:
                ignored.append(path)
            continue
        if value != under:
            ignored.append(path)
    return out, ignored


def restricted_keys(data: Mapping[str, Any], model: type[BaseModel]) -> list[str]:
    """The fields ``data`` sets that are not cosmetic: they merge only tighter (or not at all) while the file is
    untrusted, and replace what is below once it is trusted."""
    return [
        path
        for path, declared in declarations(model).items()
        if declared.get(TRUST) != "any" and lookup_dotted(data, path)[0]
    ]
