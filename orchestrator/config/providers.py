"""Providers: OpenAI-compatible (or DeepSeek-compatible) servers named in the configuration, and the roles that use
them.

``[[providers]]`` entries come from the user's own file (or a trusted workspace's: ``providers`` is guarded like
``base_url``, :mod:`orchestrator.config.trust`). Each names one model on one server::

    [[providers]]
    name = "llama-local"
    kind = "openai"                      # the wire dialect (sessions/wire/provider.py); "deepseek" for a reseller
    base_url = "http://127.0.0.1:8080/v1"
    model = "qwen2.5-coder"
    # api_key_env = "LOCAL_KEY"          # none: no key is sent
    free = true                          # or [providers.prices] hit / miss / output in USD per 1M tokens

``[roles]`` chooses an entry by name for the executor, the planner and the escalation target of ``<<<NEEDS_PRO>>>``
(the built-in entries ``flash`` and ``pro`` are DeepSeek's, the defaults, byte for byte as before; a role not named
follows the executor off DeepSeek, :func:`role_endpoint`). Roles only name
entries, so an untrusted workspace may choose among the user's providers but never define or redirect one.

``orchestrator.config.endpoints.resolve_roles`` is the one resolution: which entry each role uses, with its model
id, its provider (name and kind), where it is and which key it sends. A model without a price is *unpriced*: its
requests count as $0, and a dollar budget refuses to run on it (:func:`unpriced_budget_problem`); a request budget
still works.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.config.field_trust import anything, nothing
from orchestrator.errors import ReasonixError
from sessions.accounting import FamilyPrice
from sessions.wire import Provider, ProviderKind

BUILT_IN = ("flash", "pro")
"""The built-in entries: DeepSeek's two models at ``base_url`` with the key of ``api_key_env``."""
Role = Literal["executor", "planner", "escalation"]
ROLE_DEFAULTS: dict[Role, str] = {"executor": "flash", "planner": "flash", "escalation": "pro"}


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ProviderConfig(_Entry):
    """One ``[[providers]]`` entry: one model on one server."""

    name: str = Field(min_length=1, max_length=60, json_schema_extra=nothing())
    kind: ProviderKind = Field("openai", json_schema_extra=nothing())
    base_url: str = Field(json_schema_extra=nothing())
    model: str = Field(min_length=1, json_schema_extra=nothing())
    api_key_env: str | None = Field(None, json_schema_extra=nothing())
    """The environment variable holding the key; none: no key is sent (a local server)."""
    prices: FamilyPrice | None = Field(None, json_schema_extra=nothing())
    free: bool = Field(False, json_schema_extra=nothing())
    """The model costs nothing (a local server): dollar budgets work and count $0."""
    context_window: int | None = Field(None, gt=0, json_schema_extra=nothing())
    max_output: int | None = Field(None, gt=0, json_schema_extra=nothing())

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError(f"expected a name of letters, digits, '-', '_' or '.', got {value!r}")
        if value in BUILT_IN:
            raise ValueError(f"{value!r} is a built-in entry (DeepSeek's {value} model); choose another name")
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"expected an http(s) URL such as http://127.0.0.1:8080/v1, got {value!r}")
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError(f"expected the name of an environment variable such as OPENAI_API_KEY, got {value!r}")
        return value


class RolesConfig(BaseModel):
    """Which entry each role uses, by name: ``flash``, ``pro`` or a ``[[providers]]`` entry's."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    executor: str | None = Field(None, min_length=1, json_schema_extra=anything())
    """``reasonix run``, ``-p``, ``code`` and a goal's executor (default: ``flash``)."""
    planner: str | None = Field(None, min_length=1, json_schema_extra=anything())
    """A goal's planner (default: ``flash``)."""
    escalation: str | None = Field(None, min_length=1, json_schema_extra=anything())
    """What ``<<<NEEDS_PRO>>>`` and pro steps escalate to (default: ``pro``)."""


@dataclass(frozen=True)
class Endpoint:
    """One entry as resolved: the model id sent, the provider (name, kind), where, which key, and its price."""

    name: str
    model: str
    provider: Provider
    base_url: str
    api_key_env: str | None
    priced: bool
    context_window: int | None = None
    max_output: int | None = None

    @property
    def built_in(self) -> bool:
        return self.name in BUILT_IN


class ProviderChoiceError(ReasonixError):
    """A role or ``--model`` names no entry (or two entries claim one model id): the message lists the entries."""


def check_distinct(used: Iterable[Endpoint]) -> None:
    """Entries in use must not share a model id across servers: requests are routed by model id."""
    seen: dict[str, Endpoint] = {}
    for e in used:
        other = seen.setdefault(e.model, e)
        if (other.base_url, other.provider) != (e.base_url, e.provider):
            raise ProviderChoiceError(
                f"the entries {other.name} and {e.name} both name model {e.model!r} on different servers; "
                f"requests are routed by model id, so give one role only one of them"
            )


def unpriced_budget_problem(used: Iterable[Endpoint], budget_usd: float | None) -> str | None:
    """Why a dollar budget cannot hold on these entries (one has no price), or ``None``."""
    return unpriced_problem([e.name for e in used if not e.priced], budget_usd)


def unpriced_problem(unpriced: Iterable[str], budget_usd: float | None) -> str | None:
    """Why a dollar budget cannot hold on these unpriced entries or models, or ``None`` (none, or no such budget)."""
    names = sorted(set(unpriced))
    if budget_usd is None or not names:
        return None
    return (
        f"a budget in dollars cannot be kept on {', '.join(names)}: no price is configured for "
        f"{'it' if len(names) == 1 else 'them'}, so every request would count as $0. Give its [[providers]] "
        f"entry prices (hit, miss, output per 1M tokens) or free = true, or limit requests instead (--max-requests)"
    )


def provider_prices(
    providers: Iterable[ProviderConfig], families: Mapping[str, FamilyPrice], known: Callable[[str], bool]
) -> tuple[dict[str, FamilyPrice], frozenset[str]]:
    """``families`` with each entry's prices (or ``free``: zero) under its model id, and the model ids left unpriced
    (an entry with neither, whose model ``known`` does not price either)."""
    out = dict(families)
    unpriced: set[str] = set()
    for entry in providers:
        if entry.free or entry.prices is not None:
            out.setdefault(entry.model, entry.prices or FamilyPrice(hit=0, miss=0, output=0))
        elif entry.model not in out and not known(entry.model):
            unpriced.add(entry.model)
    return out, frozenset(unpriced)
