"""The checks ``reasonix doctor`` runs. Each returns a :class:`Check`: a status, what was found, and a fix on failure.

Nothing here ever prints or returns the API key: only the name of the variable that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import trio

from orchestrator.check import Check, Status
from orchestrator.config.endpoints import DEFAULT_BASE_URL
from orchestrator.config.model import ResolvedConfig, load_config, user_config_path
from orchestrator.config.providers import ProviderConfig
from orchestrator.errors import ConfigError
from orchestrator.text.wording import counted
from sessions.accounting import PriceError

UNTRUSTED = "refused: this workspace file"
"""How a problem that only ``reasonix trust`` fixes begins (a workspace file with keys that need trust)."""


def check_config(
    workspace: Path, flags: Mapping[str, object], env: Mapping[str, str]
) -> tuple[Check, ResolvedConfig | None]:
    try:
        resolved = load_config(workspace=workspace, flags=flags, env=env)
    except ConfigError as exc:
        where = sorted({p.source for p in exc.problems})
        untrusted = sorted({p.source for p in exc.problems if p.message.startswith(UNTRUSTED)})
        wrong = sorted({p.source for p in exc.problems if not p.message.startswith(UNTRUSTED)})
        fix = []
        if untrusted:
            fix.append(
                f"check {', '.join(untrusted)}, then trust it as it is: "
                f"reasonix trust --workspace {workspace.expanduser().resolve()}"
            )
        if wrong:
            fix.append(f"edit {', '.join(wrong)}: correct or remove each key above")
        check = Check(
            "configuration",
            "fail",
            f"{counted(len(exc.problems), 'problem')} in {', '.join(where)}",
            fix=tuple(fix),
            problems=tuple(str(p) for p in exc.problems),
        )
        return check, None
    if resolved.files:
        origin = "from " + ", ".join(str(f) for f in resolved.files)
    else:
        origin = f"built-in defaults (no {workspace / 'reasonix.toml'}, no {user_config_path(env)})"
    c = resolved.config
    detail = (
        f"{origin}; base_url {c.base_url} ({resolved.sources['base_url']}), models {c.models.flash} / {c.models.pro}"
    )
    return Check("configuration", "ok", detail), resolved


def check_key(resolved: ResolvedConfig, offline: bool) -> Check:
    var = resolved.config.api_key_env
    where = resolved.sources.get("api_key", f"${var}")
    where = where if where.startswith("$") else where + " (api_key)"
    if offline:  # where the key is found is local; only checking it with the server is skipped
        found = f"set in {where} (not shown)" if resolved.api_key else f"${var} is not set, nor api_key in your config"
        return Check("API key", "skip", f"not checked with the server (--offline); {found}")
    if resolved.api_key:
        return Check("API key", "ok", f"set in {where} (not shown)")
    if resolved.config.base_url != DEFAULT_BASE_URL:
        return Check(
            "API key",
            "ok",
            f"${var} is not set; not needed for {resolved.config.base_url} (a local endpoint such as "
            "`reasonix emulate` gets a placeholder key, as every command sends it)",
        )
    return Check(
        "API key",
        "fail",
        f"${var} is not set",
        (
            f"export {var}=<your key>  (create one at https://platform.deepseek.com/api_keys)",
            "or run reasonix setup, which checks a key and saves it for you (mode 0600)",
        ),
    )


async def get_models(url: str, key: str | None, timeout_s: float) -> tuple[httpx.Response | None, str | None]:
    """``GET url`` with the key, if any, within ``timeout_s``: the response, or None and what went wrong (None when
    nothing answered in time)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with trio.move_on_after(timeout_s):
        try:
            async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
                return await client.get(url, headers=headers), None
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return None, None


async def probe_base_url(base_url: str, api_key: str | None, timeout_s: float, source: str = "default") -> Check:
    """GET ``{base_url}/models`` within ``timeout_s``. Any HTTP answer proves the server is reachable."""
    url = f"{base_url}/models"
    where = f"base_url is {base_url} (from {source})"
    response, error = await get_models(url, api_key, timeout_s)
    if response is None:
        what = error or f"no answer within {timeout_s:g}s"
        return Check(
            "server",
            "fail",
            f"cannot reach {url}: {what}",
            (f"check the network connection and {where}", "or pass --offline to skip this check"),
        )
    status = response.status_code
    if status == 200:
        try:
            models = [m["id"] for m in response.json().get("data", [])]
        except (ValueError, TypeError, KeyError, AttributeError):
            models = []
        listed = f" ({len(models)} models: {', '.join(models[:6])})" if models else ""
        return Check("server", "ok", f"GET {url} → 200{listed}")
    if status in (401, 403) and api_key:
        return Check(
            "server",
            "fail",
            f"GET {url} → {status}: the server rejected the key",
            ("check the key (a fresh one from https://platform.deepseek.com/api_keys)",),
        )
    if status in (401, 403):
        return Check("server", "ok", f"GET {url} → {status} (reachable; no key was sent)")
    if status >= 500:
        return Check("server", "fail", f"GET {url} → {status}: the server is failing", ("try again later",))
    return Check(
        "server",
        "fail",
        f"GET {url} → {status}: this does not look like a DeepSeek API",
        (f"check {where}; the default is https://api.deepseek.com",),
    )


def check_prices(resolved: ResolvedConfig, now: datetime | None = None) -> Check:
    from sessions.wire import Usage

    at = now or datetime.now(UTC)
    c = resolved.config
    try:
        book = c.price_book()
        lines = []
        for model in (c.models.flash, c.models.pro):
            breakdown = book.cost(Usage(), model, at)
            table = breakdown.table_from.isoformat() if breakdown.table_from else "override"
            lines.append(f"{model}: {breakdown.family} table {table} ({breakdown.period} now)")
    except PriceError as exc:
        return Check("prices", "fail", "a configured model has no price", tuple(str(exc).splitlines()))
    return Check("prices", "ok", "; ".join(lines))


def check_tokenizer() -> Check:
    from sessions.accounting import tokens

    try:
        n = tokens.count("reasonix doctor: hello, DeepSeek")
        size = tokens.tokenizer().get_vocab_size()
    except tokens.TokenizerUnavailable as exc:
        return Check("tokenizer", "fail", str(exc), ("reinstall reasonix: pip install -e .",))
    return Check("tokenizer", "ok", f"DeepSeek vocabulary loaded ({size} tokens; sample counted {n})")


def check_ripgrep() -> Check:
    from sessions.tools.search import find_rg

    path = find_rg()
    if path:
        return Check("ripgrep", "ok", f"found at {path}")
    return Check(
        "ripgrep",
        "warn",
        "not installed (search falls back to a slower built-in scan)",
        ("install it: pip install ripgrep (or apt install ripgrep, brew install ripgrep)",),
    )


def check_sandbox() -> Check:
    """bubblewrap confines commands; without it every command asks first."""
    from sessions.sandbox import INSTALL_HINT, sandbox_unavailable_reason

    problem = sandbox_unavailable_reason()
    if problem is None:
        return Check("sandbox", "ok", "bubblewrap works: commands run confined to the workspace, without network")
    return Check("sandbox", "warn", f"no sandbox: {problem}; every command will ask first", (INSTALL_HINT,))


async def check_balance(base_url: str, api_key: str, key_env: str, timeout_s: float) -> Check:
    """The account balance (``GET /user/balance``): a refused key fails; an endpoint without it only warns."""
    from sessions.wire import AuthenticationError, DeepSeekClient, DeepSeekError

    try:
        async with DeepSeekClient(base_url=base_url, api_key=api_key) as client:
            balance = await client.balance(timeout_s)
    except AuthenticationError:
        return Check(
            "balance", "fail", "the API refused the key", (f"set {key_env} to a valid key, or run reasonix setup",)
        )
    except DeepSeekError as exc:
        return Check("balance", "warn", f"not known: {exc.message}")
    if not balance.is_available:
        return Check("balance", "warn", balance.render(), ("top up at https://platform.deepseek.com/top_up",))
    return Check("balance", "ok", balance.render())


# ------------------------------------------------------------------------------------------------------ providers


@dataclass(frozen=True)
class ProviderProbe:
    """What ``GET {base_url}/models`` said about one ``[[providers]]`` entry: reachable, the key accepted, the model
    listed (where the server lists models), and the ids it lists."""

    status: Status
    detail: str
    fix: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()


def _listed_models(response: httpx.Response) -> tuple[str, ...] | None:
    """The model ids of an OpenAI-style ``/models`` answer (``data[].id``; Ollama's ``models[].model`` too), or
    ``None`` when the answer lists none the way a server that lists models would."""
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    ids: list[str] = []
    for key, field in (("data", "id"), ("models", "model")):
        items = body.get(key)
        if isinstance(items, list):
            ids.extend(str(m[field]) for m in items if isinstance(m, dict) and isinstance(m.get(field), str))
    return tuple(dict.fromkeys(ids)) if ids else None


async def probe_provider(entry: ProviderConfig, key: str | None, timeout_s: float) -> ProviderProbe:
    """``GET {base_url}/models`` of ``entry`` within ``timeout_s``, with its key when it has one."""
    url = f"{entry.base_url}/models"
    response, error = await get_models(url, key, timeout_s)
    if response is None:
        return ProviderProbe(
            "fail",
            f"cannot reach {url}: {error or f'no answer within {timeout_s:g}s'}",
            (f"start the server, or correct base_url of the [[providers]] entry {entry.name}",),
        )
    status = response.status_code
    if status in (401, 403):
        if key:
            fix = f"check the key in ${entry.api_key_env}: the server at {entry.base_url} refused it"
        else:
            fix = f"the server wants a key: put it in a variable and name it as api_key_env of {entry.name}"
        return ProviderProbe("fail", f"GET {url} → {status}: the key was refused", (fix,))
    if status >= 500:
        return ProviderProbe("fail", f"GET {url} → {status}: the server is failing", ("try again later",))
    if status != 200:  # reachable, and the key not refused; it lists no models (a gateway may not)
        return ProviderProbe(
            "ok", f"reachable (GET {url} → {status}: it lists no models, so {entry.model} is unchecked)"
        )
    listed = _listed_models(response)
    if listed is None:
        return ProviderProbe("ok", f"reachable (GET {url} → 200, no model list: {entry.model} is unchecked)")
    shown = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
    if entry.model not in listed:
        return ProviderProbe(
            "fail",
            f"reachable, but {entry.model} is not among the models it lists ({shown})",
            (f"set model of the [[providers]] entry {entry.name} to one of them (or load {entry.model} there)",),
            listed,
        )
    accepted = "key accepted, " if key else ""
    return ProviderProbe("ok", f"reachable, {accepted}{entry.model} listed", listed=listed)


def provider_price(entry: ProviderConfig, resolved: ResolvedConfig) -> tuple[str, bool]:
    """How ``entry`` is priced, and whether it is (an unpriced entry counts $0 and refuses dollar budgets)."""
    if entry.free:
        return "free", True
    if entry.prices is not None:
        p = entry.prices
        return f"priced {p.hit:g} / {p.miss:g} / {p.output:g} USD per 1M tokens (hit / miss / output)", True
    if not resolved.config.price_book().is_unpriced(entry.model):
        return "priced by the price book", True
    return "unpriced: its requests count as $0 and a dollar budget refuses to run on it", False


def roles_using(resolved: ResolvedConfig) -> tuple[dict[str, list[str]], Check | None]:
    """Which roles use each entry, by entry name; and a failing check when ``[roles]`` names no entry."""
    from orchestrator.config.endpoints import resolve_roles
    from orchestrator.config.providers import ProviderChoiceError

    try:
        roles = resolve_roles(resolved.config)
    except ProviderChoiceError as exc:
        return {}, Check("roles", "fail", str(exc), ("correct [roles] in your config.toml",))
    used: dict[str, list[str]] = {}
    for role, e in roles.items():
        used.setdefault(e.name, []).append(role)
    return used, None


async def check_providers(
    resolved: ResolvedConfig, env: Mapping[str, str], timeout_s: float, offline: bool = False
) -> list[Check]:
    """One check per ``[[providers]]`` entry: its key, its server and model (not ``offline``), its price, and the
    roles that use it. A failure of an entry no role uses only warns: nothing runs on it unless ``--model`` picks it."""
    used, problem = roles_using(resolved)
    checks = [] if problem is None else [problem]
    for entry in resolved.config.providers:
        roles = used.get(entry.name, [])
        by = f"used by {', '.join(roles)}" if roles else f"used by no role (--model {entry.name} picks it)"
        price, priced = provider_price(entry, resolved)
        key = env.get(entry.api_key_env, "").strip() if entry.api_key_env else None
        where = f"{entry.kind} at {entry.base_url}, model {entry.model}"
        if entry.api_key_env and not key:
            probe = ProviderProbe(
                "fail",
                f"${entry.api_key_env} is not set",
                (f"export {entry.api_key_env}=<its key>, or remove api_key_env if the server takes none",),
            )
        elif offline:
            probe = ProviderProbe("skip", "not checked (--offline)")
        else:
            probe = await probe_provider(entry, key, timeout_s)
        status: Status = probe.status
        fix = probe.fix
        if status == "fail" and not roles:
            status = "warn"
        if status == "ok" and not priced:
            status = "warn"
            fix = (f"give the entry {entry.name} prices = {{ hit = …, miss = …, output = … }} or free = true",)
        checks.append(Check(f"provider {entry.name}", status, f"{where}: {probe.detail}; {price}; {by}", fix))
    return checks
