"""``reasonix setup --add-provider NAME``: add (or replace) an OpenAI-compatible ``[[providers]]`` entry in the
user's own configuration file, and optionally give it roles.

Without a terminal every answer comes from the flags (``--provider-url`` and ``--provider-model`` are required);
in a terminal, what the flags leave out is asked, and the model can be picked from the ones the server lists. Either
way the entry is checked as ``reasonix doctor`` checks it (``GET /models``: reachable, key accepted, model listed)
before it is saved; the check's result is said, and a failed check is saved only when the user says so (in a
terminal) or anyway with a warning (without one: the server may simply not be running yet). The key itself is never
written: the entry names the variable that holds it (``api_key_env``).

The file is edited with tomlkit (the user's other keys and comments stay) and written with mode 0600, as the
wizard writes it (:func:`orchestrator.cli.setup_wizard.write_private`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the flags are configured without importing the rest (``reasonix --help`` stays quick)
    from pydantic import ValidationError

    from orchestrator.cli.doctor_checks import ProviderProbe
    from orchestrator.config.providers import ProviderConfig

Ask = Callable[[str], str]
Say = Callable[[str], None]
ROLES = ("executor", "planner", "escalation")
"""The roles of ``[roles]``: ``orchestrator.config.providers.ROLE_DEFAULTS``'s (a test holds them equal)."""
CHECK_TIMEOUT_S = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "adding a provider", "an OpenAI-compatible server (llama.cpp, Ollama, vLLM, a gateway) as a [[providers]] entry"
    )
    group.add_argument("--add-provider", metavar="NAME", help="add or replace the [[providers]] entry NAME")
    group.add_argument("--provider-url", metavar="URL", help="its base URL, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--provider-model", metavar="MODEL", help="the model id the server answers to")
    group.add_argument(
        "--provider-key-env", metavar="VAR", help="the environment variable holding its key (none: no key is sent)"
    )
    price = group.add_mutually_exclusive_group()
    price.add_argument("--free", action="store_true", help="the model costs nothing (a local server)")
    price.add_argument("--prices", metavar="HIT,MISS,OUTPUT", help="USD per 1M tokens: cache hit, cache miss, output")
    group.add_argument("--context-window", type=int, metavar="TOKENS", help="the server's context size")
    group.add_argument("--max-output", type=int, metavar="TOKENS", help="the most tokens a reply may have")
    group.add_argument(
        "--use-for",
        action="append",
        choices=ROLES,
        metavar="ROLE",
        help=f"give it a role under [roles] (repeatable): {', '.join(ROLES)}",
    )


def _prices(text: str) -> dict[str, float]:
    parts = [p.strip() for p in text.split(",")]
    try:
        hit, miss, output = (float(p) for p in parts)
    except ValueError:
        raise ValueError(
            f"--prices: expected three numbers HIT,MISS,OUTPUT (USD per 1M tokens), got {text!r}"
        ) from None
    return {"hit": hit, "miss": miss, "output": output}


def entry_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The entry's fields the flags give (``ValueError`` for a malformed ``--prices``)."""
    fields: dict[str, Any] = {"name": args.add_provider, "kind": "openai"}
    for flag, key in (
        ("provider_url", "base_url"),
        ("provider_model", "model"),
        ("provider_key_env", "api_key_env"),
        ("context_window", "context_window"),
        ("max_output", "max_output"),
    ):
        value = getattr(args, flag, None)
        if value is not None:
            fields[key] = value
    if args.free:
        fields["free"] = True
    if args.prices:
        fields["prices"] = _prices(args.prices)
    return fields


def ask_missing(fields: dict[str, Any], roles: list[str], ask: Ask, say: Say, env: Mapping[str, str]) -> None:
    """Ask in the terminal for what the flags left out (raises EOFError when the user ends the input)."""
    while not fields.get("base_url"):
        fields["base_url"] = ask("Base URL of the server (e.g. http://127.0.0.1:8080/v1 for llama-server): ").strip()
    if "api_key_env" not in fields:
        var = ask("Environment variable holding its key (Enter alone: the server takes no key): ").strip()
        if var:
            fields["api_key_env"] = var
    if not fields.get("model"):
        listed = _probe(fields, env).listed
        if listed:
            say(f"  the server lists: {', '.join(listed[:12])}")
        default = listed[0] if len(listed) == 1 else ""
        while not fields.get("model"):
            fields["model"] = ask(f"Model id it answers to{f' [{default}]' if default else ''}: ").strip() or default
    if "free" not in fields and "prices" not in fields:
        answer = ask("Prices: 'free' (a local server), HIT,MISS,OUTPUT in USD per 1M tokens, or Enter for none: ")
        if answer.strip().lower() == "free":
            fields["free"] = True
        elif answer.strip():
            fields["prices"] = _prices(answer)
    if not roles:
        answer = ask(f"Use it for which roles ({', '.join(ROLES)}; comma-separated, Enter for none): ")
        roles.extend(r.strip() for r in answer.split(",") if r.strip())


def _probe(fields: Mapping[str, Any], env: Mapping[str, str]) -> ProviderProbe:
    """The doctor's check of an entry's server; an entry that does not validate yet is checked with a model of
    ``?`` (only the list of models is wanted then)."""
    import trio
    from pydantic import ValidationError

    from orchestrator.cli.doctor_checks import ProviderProbe, probe_provider
    from orchestrator.config.providers import ProviderConfig

    try:
        entry = ProviderConfig.model_validate({"model": "?", **fields})
    except ValidationError as exc:
        return ProviderProbe("fail", _first_error(exc))
    key = env.get(entry.api_key_env, "").strip() or None if entry.api_key_env else None
    return trio.run(probe_provider, entry, key, CHECK_TIMEOUT_S)


def _first_error(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())


def save_provider(path: Path, entry: ProviderConfig, roles: list[str]) -> None:
    """Add ``entry`` to ``[[providers]]`` in ``path`` (replacing one of its name) and name it under ``[roles]``."""
    import tomlkit

    from orchestrator.cli.setup_wizard import DIR_MODE, write_private
    from orchestrator.config.providers import ProviderConfig

    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    table = tomlkit.table()
    dumped = entry.model_dump(exclude_none=True)
    for key in ProviderConfig.model_fields:  # the order of the README's entries: name, kind, base_url, model, …
        if key in dumped and (key != "free" or entry.free):
            value = dumped[key]
            if isinstance(value, dict):
                inline = tomlkit.inline_table()
                inline.update({k: float(v) for k, v in value.items()})  # Decimal has no TOML form
                value = inline
            table[key] = value
    existing = doc.get("providers")
    providers = tomlkit.aot()
    if existing is not None:
        for item in existing:
            if item.get("name") != entry.name:
                providers.append(item)
    providers.append(table)
    doc.pop("providers", None)
    if roles:
        section = doc.get("roles")
        if section is None:
            section = tomlkit.table()
            doc["roles"] = section
        for role in roles:
            section[role] = entry.name
    doc["providers"] = providers
    write_private(path, tomlkit.dumps(doc))


def add_provider(
    args: argparse.Namespace, env: Mapping[str, str], ask: Ask | None, say: Say, *, confirm: Ask | None = None
) -> int:
    """The whole of ``--add-provider``: 0 saved, 1 ended by the user (or refused), 2 a wrong or missing answer."""
    from pydantic import ValidationError

    from orchestrator.config.model import user_config_path
    from orchestrator.config.providers import ProviderConfig

    path = user_config_path(env)
    roles: list[str] = list(args.use_for or [])
    try:
        fields = entry_fields(args)
        if ask is not None:
            ask_missing(fields, roles, ask, say, env)
    except ValueError as exc:
        say(f"reasonix setup: {exc}")
        return 2
    except EOFError:
        say("\nsetup ended: nothing was written")
        return 1
    missing = [
        flag for flag, key in (("--provider-url", "base_url"), ("--provider-model", "model")) if key not in fields
    ]
    if missing:
        say(f"reasonix setup: --add-provider needs {' and '.join(missing)} (there is no terminal to ask in)")
        return 2
    unknown = [r for r in roles if r not in ROLES]
    if unknown:
        say(f"reasonix setup: {', '.join(unknown)} is no role: expected {', '.join(ROLES)}")
        return 2
    try:
        entry = ProviderConfig.model_validate(fields)
    except ValidationError as exc:
        say(f"reasonix setup: the entry {fields['name']} is not valid: {_first_error(exc)}")
        return 2
    if entry.api_key_env and not env.get(entry.api_key_env, "").strip():
        say(f"  – ${entry.api_key_env} is not set here: the server is checked without a key")
    say(f"checking {entry.base_url} …")
    probe = _probe(entry.model_dump(), env)
    mark = {"ok": "✓", "fail": "✗"}.get(probe.status, "–")
    say(f"  {mark} {probe.detail}")
    for fix in probe.fix:
        say(f"    fix: {fix}")
    if probe.status == "fail":
        if confirm is not None:
            try:
                keep = confirm("  Save the entry anyway? [y/N] ").strip().lower() in ("y", "yes")
            except EOFError:
                keep = False
            if not keep:
                say("nothing was written")
                return 1
        else:
            say("  saved anyway (the server may not be running yet): reasonix doctor checks it again")
    save_provider(path, entry, roles)
    used = f"; [roles] {', '.join(f'{r} = {entry.name!r}' for r in roles)}" if roles else ""
    say(f"✓ saved the [[providers]] entry {entry.name} ({entry.model} at {entry.base_url}){used} in {path}")
    if not roles:
        say(f'next: reasonix run --model {entry.name} "…" uses it for one command, or name it under [roles]')
    return 0
