"""The entries the roles use (:func:`resolve_roles`), and the clients a run talks through: DeepSeek's (the built-in
``flash`` and ``pro``), and with ``[[providers]]`` / ``[roles]`` one client per provider in use, the executor's
routing every other model id to its own (:meth:`sessions.wire.client.DeepSeekClient.route`). Nothing here sends a
request."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from orchestrator.config.model import Config, ResolvedConfig
from orchestrator.config.providers import (
    BUILT_IN,
    ROLE_DEFAULTS,
    Endpoint,
    ProviderChoiceError,
    Role,
    RolesConfig,
    check_distinct,
)
from orchestrator.errors import ReasonixError
from sessions.wire import DEEPSEEK, ClientSettings, DeepSeekClient, Provider

DEFAULT_BASE_URL = Config().base_url
LOCAL_PLACEHOLDER_KEY = "sk-local-placeholder"
"""Sent to a non-default base URL (the emulator, a local proxy) when no key is set: they accept any non-empty key."""


class MissingApiKeyError(ReasonixError):
    """The user is at fault: no API key for the real DeepSeek endpoint."""


class ModelChoiceError(ReasonixError):
    """The user is at fault: a model id with no known price."""


def endpoints(config: Config) -> dict[str, Endpoint]:
    """Every entry by name: the built-in ``flash`` and ``pro``, then ``[[providers]]``."""
    book = config.price_book()
    out = {
        name: Endpoint(
            name=name,
            model=getattr(config.models, name),
            provider=DEEPSEEK,
            base_url=config.base_url,
            api_key_env=config.api_key_env,
            priced=not book.is_unpriced(getattr(config.models, name)),
        )
        for name in BUILT_IN
    }
    for entry in config.providers:
        out[entry.name] = Endpoint(
            name=entry.name,
            model=entry.model,
            provider=Provider(name=entry.name, kind=entry.kind),
            base_url=entry.base_url,
            api_key_env=entry.api_key_env,
            priced=not book.is_unpriced(entry.model),
            context_window=entry.context_window,
            max_output=entry.max_output,
        )
    return out


def endpoint(config: Config, name: str, *, what: str = "a role") -> Endpoint:
    """The entry called ``name`` (:class:`ProviderChoiceError` naming the known ones when there is none)."""
    known = endpoints(config)
    found = known.get(name)
    if found is None:
        raise ProviderChoiceError(
            f"{what} names {name!r}, which is no provider: expected one of {', '.join(known)} (flash and pro are "
            f"DeepSeek's; add others as [[providers]] entries in your config.toml)"
        )
    return found


def role_endpoint(config: Config, role: Role) -> Endpoint:
    """The entry ``role`` uses: ``[roles]``, else its default. The executor's default is ``flash``; the planner's
    is the executor's entry, and so is the escalation's unless that is ``flash`` (then ``pro``): a user who moves the
    executor to a local model keeps every role there until another is named."""
    chosen = getattr(config.roles, role)
    if chosen is None and role != "executor":
        executor = config.roles.executor or ROLE_DEFAULTS["executor"]
        chosen = ROLE_DEFAULTS[role] if executor == ROLE_DEFAULTS["executor"] else executor
    return endpoint(config, chosen or ROLE_DEFAULTS[role], what=f"[roles] {role}")


def resolve_roles(config: Config) -> dict[Role, Endpoint]:
    """Every role's entry. Raises :class:`ProviderChoiceError` for a name that is no entry, or for two entries of
    different servers that claim one model id (a request is routed by its model id)."""
    roles: dict[Role, Endpoint] = {role: role_endpoint(config, role) for role in ROLE_DEFAULTS}
    check_distinct(roles.values())
    return roles


def resolve_model(config: Config, choice: str) -> str:
    """``flash`` → the executor's model (``[roles] executor``, else the configured flash id), ``pro`` → the
    escalation's; the name of a ``[[providers]]`` entry → its model; anything else is taken as an id."""
    if choice in ("flash", "pro") and not _configured(config):
        return config.models.flash if choice == "flash" else config.models.pro  # no providers: exactly as before
    try:
        if choice in ("flash", "pro"):
            return role_endpoint(config, "executor" if choice == "flash" else "escalation").model
        if any(p.name == choice for p in config.providers):
            return endpoint(config, choice).model
    except ProviderChoiceError as exc:
        raise ModelChoiceError(str(exc)) from exc
    return choice


def session_limits(config: Config, model: str) -> dict[str, Any]:
    """The ``SessionSettings`` fields the ``[[providers]]`` entries set for a session on ``model``: ``context_window``
    of the entry serving ``model`` (what compaction, the tiers and ``/context`` measure against), and ``max_output``
    of every entry, by model id (a session may escalate to another entry's model). Empty without either: the session
    is what it always was, byte for byte."""
    out: dict[str, Any] = {}
    caps = {p.model: p.max_output for p in config.providers if p.max_output is not None}
    if caps:
        out["max_output"] = caps
    window = next((p.context_window for p in config.providers if p.model == model and p.context_window), None)
    if window is not None:
        out["context_window"] = window
    return out


def api_key_for(resolved: ResolvedConfig) -> str:
    """The key to send, or :class:`MissingApiKeyError`; a local endpoint gets a placeholder (it takes any key)."""
    config = resolved.config
    if resolved.api_key is not None:
        return resolved.api_key
    if config.base_url == DEFAULT_BASE_URL:
        raise MissingApiKeyError(
            f"no API key: set {config.api_key_env} (a key from https://platform.deepseek.com/api_keys) or save one "
            "with `reasonix setup`, or pass --base-url to a local emulator (start one with `reasonix emulate`)"
        )
    return LOCAL_PLACEHOLDER_KEY


def build_client(
    resolved: ResolvedConfig,
    *,
    settings: ClientSettings | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    env: Mapping[str, str] | None = None,
    model: str | None = None,
) -> DeepSeekClient:
    """The client for the configured endpoint (:class:`MissingApiKeyError` without a key); ``transport``: a test's.

    With ``[[providers]]`` or ``[roles]``, the client is the executor's provider's, and every other entry a role
    (or ``[[providers]]``) names is routed to its own provider's client by model id (:func:`provider_client`): one
    session can then escalate to another server, and a planner can use another than the executor. ``model``: the
    command's ``--model``; the name of a ``[[providers]]`` entry makes that entry the executor's."""
    config = resolved.config
    if not _configured(config):
        key = api_key_for(resolved)
        settings = settings or ClientSettings(**config.client_settings_kwargs(), api_key_env=config.api_key_env)
        return DeepSeekClient(base_url=config.base_url, api_key=key, settings=settings, transport=transport)
    return provider_client(resolved, settings=settings, transport=transport, env=env, model=model)


def _configured(config: Config) -> bool:
    return bool(config.providers) or config.roles != RolesConfig()


def provider_client(
    resolved: ResolvedConfig,
    *,
    settings: ClientSettings | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    env: Mapping[str, str] | None = None,
    model: str | None = None,
) -> DeepSeekClient:
    """The executor's provider's client (``model``, a ``[[providers]]`` entry's name from ``--model``, stands for the
    executor), every other entry routed to its own provider's client by model id: the roles' entries and every
    ``[[providers]]`` entry (so ``--model NAME`` and a subagent's ``model`` reach theirs). An entry without its key
    is left out unless it is the executor's or a role names it (then :class:`MissingApiKeyError`)."""
    config = resolved.config
    env = os.environ if env is None else env
    try:
        roles = resolve_roles(config)
        main_entry = endpoint(config, model) if model in {p.name for p in config.providers} else roles["executor"]
    except ProviderChoiceError as exc:
        raise ModelChoiceError(str(exc)) from exc
    named = {getattr(config.roles, r) for r in roles} - {None}
    required = {main_entry.name} | {e.name for e in roles.values() if e.name in named}
    clients: dict[tuple[str, str, str | None], DeepSeekClient] = {}

    def client_of(e: Endpoint) -> DeepSeekClient | None:
        key = _key_for(resolved, e, env, required=e.name in required)
        if key is _SKIP:
            return None
        ident = (e.provider.name, e.base_url, e.api_key_env)
        if ident not in clients:
            key_env = e.api_key_env or "the variable named by api_key_env"
            chosen = settings or ClientSettings(**config.client_settings_kwargs(), api_key_env=key_env)
            clients[ident] = DeepSeekClient(
                base_url=e.base_url, api_key=key, settings=chosen, transport=transport, provider=e.provider
            )
        return clients[ident]

    main = client_of(main_entry)
    assert main is not None
    routed = [main_entry, *roles.values()]
    for e in endpoints(config).values():
        if all(e.model != r.model for r in routed):
            routed.append(e)
    check_distinct([e for e in routed if e.name in required or not e.built_in])
    for e in routed:
        other = client_of(e)
        if other is not None:
            main.route(e.model, other)
    return main


_SKIP = "\0skip"


def role_entries(config: Config) -> list[Endpoint]:
    """The entries the roles use (:class:`ModelChoiceError` when one names no entry); none without providers."""
    if not _configured(config):
        return []
    try:
        return list(resolve_roles(config).values())
    except ProviderChoiceError as exc:
        raise ModelChoiceError(str(exc)) from exc


def check_keys(resolved: ResolvedConfig, env: Mapping[str, str] | None = None) -> None:
    """:class:`MissingApiKeyError` when an entry a role uses has no key (the first thing to fix, before anything is
    asked or sent); :class:`ModelChoiceError` when a role names no entry."""
    config = resolved.config
    if not _configured(config):
        api_key_for(resolved)
        return
    try:
        roles = resolve_roles(config)
    except ProviderChoiceError as exc:
        raise ModelChoiceError(str(exc)) from exc
    for e in roles.values():
        _key_for(resolved, e, os.environ if env is None else env, required=True)


def _key_for(resolved: ResolvedConfig, e: Endpoint, env: Mapping[str, str], *, required: bool) -> str | None:
    """The key an entry sends: the built-in entries DeepSeek's (:func:`api_key_for`); a provider's from its
    variable, or none without one."""
    if e.built_in:
        if not required and resolved.api_key is None and e.base_url == DEFAULT_BASE_URL:
            return _SKIP
        return api_key_for(resolved)
    if e.api_key_env is None:
        return None
    key = env.get(e.api_key_env, "").strip()
    if key:
        return key
    if not required:
        return _SKIP
    raise MissingApiKeyError(
        f"no API key for the provider {e.name}: set {e.api_key_env} (api_key_env of its [[providers]] entry), or "
        f"remove api_key_env there if the server at {e.base_url} takes no key"
    )
