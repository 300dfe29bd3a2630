"""Configuration: what it holds, and how it is resolved.

Sources, highest first:

1. command-line flags (``flags``: dotted keys such as ``base_url`` or ``client.deadline_s``; ``None`` values ignored);
2. the environment: ``DEEPSEEK_BASE_URL`` overrides ``base_url``; the API key itself is read from the variable that
   ``api_key_env`` names (``DEEPSEEK_API_KEY`` by default), else from ``api_key`` in the user file (``reasonix
   setup`` writes it, mode 0600; a workspace file holding one is an error), and lives only on :class:`ResolvedConfig`;
3. the project files ``<workspace>/reasonix.local.toml`` (the user's answers to permission prompts) over
   ``<workspace>/reasonix.toml``; keys that redirect requests, pick the key, open the network, drop the sandbox or
   allow commands are refused there until the user trusts the workspace, and without trust the rest can only
   tighten what is below (more deny / ask rules and hidden paths, a stricter mode): :mod:`orchestrator.config.trust`;
4. the user file ``$XDG_CONFIG_HOME/reasonix/config.toml`` (``~/.config/reasonix/config.toml`` by default);
5. the built-in defaults below.

Every source is validated on its own, so an error names the file, the dotted key and the expected type
(``reasonix.toml: client.stall_timeout_s: expected a number, got "fast"``); an unknown key is an error that suggests
the closest valid one. TOML is typed, so values are checked strictly (``thinking = "yes"`` is an error, not ``True``).

``thinking`` and ``reasoning_effort`` are plain fields, but they are fixed for the life of a session (DESIGN §3.7:
both render at the very start of the prompt, so changing them mid-session would invalidate the cached prefix). A
session reads them once when it starts; a changed file only affects sessions started afterwards.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.config.context import ContextConfig
from orchestrator.config.durations import parse_duration
from orchestrator.config.field_trust import anything, merge_untrusted, nothing, tighter
from orchestrator.config.files import deep_merge, flatten, lookup_dotted, read_toml, unflatten
from orchestrator.config.hooks import HookConfig, collect_hooks
from orchestrator.config.mcp import MCP_FILE, McpConfig, read_mcp_json, sandbox_key_problems
from orchestrator.config.messages import validate_layer
from orchestrator.config.providers import ProviderConfig, RolesConfig, provider_prices
from orchestrator.config.trust import ignored_notice, is_trusted, trust_path, untrusted_problems
from orchestrator.errors import ConfigError, ConfigProblem
from orchestrator.run_seal import key_path
from sessions.accounting import FamilyPrice, PriceBook, default_price_book
from sessions.sandbox import (
    DEFAULT_FORBID_READ,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    DEFAULT_TMP_MB,
    SANDBOX_MODES,
    SandboxPolicy,
)
from sessions.wire import ReasoningEffort

PROJECT_FILE = "reasonix.toml"
LOCAL_FILE = "reasonix.local.toml"
USER_FILE = "config.toml"
KEY_FIELD = "api_key"
"""The API key, in the user file only (``reasonix setup`` writes it there, readable by the user alone)."""
KEY_ONLY_IN_USER_FILE = (
    "the API key belongs in the user config file (reasonix setup writes it there, mode 0600) or in the environment, "
    "never in a workspace file, which may be shared or committed: remove it"
)
ENV_BASE_URL = "DEEPSEEK_BASE_URL"
DEFAULT_SOURCE = "default"
ENV_SOURCE = "environment"
FLAG_SOURCE = "command line"


SANDBOX_STRICTEST_FIRST = ("read-only", "workspace-write", "full-access")
PERMISSIONS_STRICTEST_FIRST = ("read-only", "ask", "auto", None)
MAX_AGENT_REQUESTS = 1000  # the most requests the subagents of one session may send together: no file raises it


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ModelsConfig(_Section):
    """Model ids. They change more often than the code: keep them here."""

    flash: str = Field("deepseek-v4-flash", min_length=1, json_schema_extra=nothing())  # it decides every price
    pro: str = Field("deepseek-v4-pro", min_length=1, json_schema_extra=nothing())


class ClientConfig(_Section):
    """Maps one to one onto ``sessions.wire.client.ClientSettings``."""

    deadline_s: float = Field(600.0, gt=0, allow_inf_nan=False, json_schema_extra=tighter("smaller"))
    """Whole-request deadline in seconds (DeepSeek drops a request that has not started inference after 10 min)."""
    stall_timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False, json_schema_extra=tighter("smaller"))
    """Seconds without real data (keep-alives do not count) before a stream is declared stalled."""
    max_attempts: int = Field(4, ge=1, le=20, json_schema_extra=tighter("smaller"))
    """Attempts per request, the first included, for retryable failures (429, 500, 503, connection errors)."""
    max_reply_chars: int = Field(4_000_000, ge=1_000, json_schema_extra=tighter("smaller"))
    """The largest reply accepted (content, reasoning and tool-call arguments together); a longer one is abandoned."""


class PricesConfig(_Section):
    """Price overrides (USD per 1M tokens). They win over the shipped dated tables for the families they name.

    ``families`` keys are price families (``flash``, ``pro``) or model ids of their own; ``aliases`` map further
    model ids to a family. Overrides are flat unless ``off_peak_multiplier`` is set (then DeepSeek's peak windows).
    """

    families: dict[str, FamilyPrice] = Field(default_factory=dict, json_schema_extra=nothing())  # $0: no budget
    aliases: dict[str, str] = Field(default_factory=dict, json_schema_extra=nothing())
    off_peak_multiplier: Decimal | None = Field(
        None, gt=0, le=1, strict=False, allow_inf_nan=False, json_schema_extra=nothing()
    )


ParallelSteps = Annotated[int, Field(ge=1, le=16)]
"""How many ready steps run at once (``[goal] parallel``): the one bound, for the configuration and ``GoalOptions``."""
TextCalls = Annotated[int, Field(ge=0, le=20)]
"""The most calls taken from one reply's text (``[repair] max_text_calls``): the one bound, for both as well."""


class GoalConfig(_Section):
    """How the goal loop works on the workspace."""

    retry_from_checkpoint: bool = Field(True, json_schema_extra=anything())
    """A step retried after failing verification starts from its checkpoint, not from the failed attempt's files."""
    parallel: ParallelSteps = Field(3, json_schema_extra=tighter("smaller"))
    """Ready steps with disjoint declared writes run at once, up to this many (1: one step at a time)."""
    preset: Literal["flash", "auto", "pro"] = Field("auto", json_schema_extra=anything())
    """How goals escalate from flash to pro when ``--preset`` is not given (``reasonix setup`` sets it)."""
    unattended: bool = Field(False, json_schema_extra=tighter("false-wins"))
    """Never ask anything: wait out DeepSeek's outages, end blocked where a person is needed (``--unattended``)."""
    max_runtime: str | None = Field(None, json_schema_extra=tighter("shorter-duration"))
    """An unattended goal's longest wall time, waits included: ``90m``, ``8h`` (``--max-runtime``)."""
    notify_cmd: str | None = Field(None, json_schema_extra=nothing())
    """A command run when an unattended goal ends (``--notify-cmd``); needs ``reasonix trust`` in a workspace's file."""

    @field_validator("max_runtime")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value


class RepairConfig(_Section):
    """Tool-call repair (``sessions.repair``)."""

    max_text_calls: TextCalls = Field(3, json_schema_extra=anything())
    """The most tool calls taken from one reply's text (the model wrote them there); 0: none, it is asked to call."""


class SandboxConfig(_Section):
    """How commands are confined (``sessions.sandbox``)."""

    mode: Literal["workspace-write", "read-only", "full-access"] = Field(
        "workspace-write", json_schema_extra=tighter("order", SANDBOX_STRICTEST_FIRST)
    )
    network: bool = Field(False, json_schema_extra=tighter("false-wins"))
    forbid_read: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBID_READ), json_schema_extra=tighter("more"))
    writable: list[str] = Field(default_factory=list, json_schema_extra=nothing())
    env: list[str] = Field(default_factory=list, json_schema_extra=nothing())
    """Environment variables passed to commands besides PATH, HOME, LANG, TERM, USER, SHELL and TMPDIR."""
    tmp_mb: int = Field(DEFAULT_TMP_MB, ge=0, json_schema_extra=tighter("smaller-bound"))
    """The size of a command's private /tmp in MB (0: unbounded)."""
    max_processes: int = Field(DEFAULT_MAX_PROCESSES, ge=0, json_schema_extra=tighter("smaller-bound"))
    """Processes and threads a command may run at once (0: unbounded)."""
    memory_mb: int = Field(DEFAULT_MEMORY_MB, ge=0, json_schema_extra=tighter("smaller-bound"))
    """Memory each process of a command may allocate, in MB (0: unbounded)."""


class PermissionsConfig(_Section):
    """Rules such as ``bash(git status)``, ``bash(npm test:*)``, ``write(src/**)``, ``read(secrets/**)``."""

    mode: Literal["ask", "auto", "read-only"] | None = Field(
        None, json_schema_extra=tighter("order", PERMISSIONS_STRICTEST_FIRST)
    )
    allow: list[str] = Field(default_factory=list, json_schema_extra=nothing())
    ask: list[str] = Field(default_factory=list, json_schema_extra=tighter("more"))
    deny: list[str] = Field(default_factory=list, json_schema_extra=tighter("more"))


class ToolsConfig(_Section):
    """Optional tools. Each is off by default: a tool joins the prefix, so turning one on changes the bytes every new
    session sends (their first request misses the cache once)."""

    web_fetch: bool = Field(False, json_schema_extra=tighter("false-wins"))
    """``web_fetch``: read a URL's page as text; each host asks unless ``web(HOST)`` is allowed in [permissions]."""


class ConversationConfig(_Section):
    """``reasonix code`` and ``reasonix chat``: reply language, output style, and when the price on screen warns."""

    language: str | None = Field(None, min_length=1, max_length=60, json_schema_extra=anything())
    """The language of replies and reasoning (``"French"``): a block in front of the next user message, never in the
    prefix, so changing it costs nothing cached."""
    style: str | None = Field(None, min_length=1, json_schema_extra=anything())
    """A named output style (built in: ``concise``, ``explanatory``; or one of ``styles``), folded into the system
    prompt once at session start: changing it starts a new session."""
    styles: dict[str, str] = Field(default_factory=dict, json_schema_extra=anything())
    """Output styles of your own: name -> the text folded into the system prompt."""
    turn_warn_usd: float = Field(0.05, ge=0, allow_inf_nan=False, json_schema_extra=anything())
    """The status line shows a turn costing more than this in yellow."""
    turn_alert_usd: float = Field(0.20, ge=0, allow_inf_nan=False, json_schema_extra=anything())
    """... and more than this in red."""
    session_warn_usd: float = Field(1.00, ge=0, allow_inf_nan=False, json_schema_extra=anything())
    """The conversation's total in yellow past this."""
    session_alert_usd: float = Field(5.00, ge=0, allow_inf_nan=False, json_schema_extra=anything())
    """... and in red past this."""


class MemoryConfig(_Section):
    """Memory the agent keeps (:mod:`orchestrator.memory`)."""

    remember: bool = Field(False, json_schema_extra=tighter("false-wins"))
    """Give the executor the ``remember`` tool (it joins the prefix: off, the bytes sent are as before)."""
    file: Literal["REASONIX.local.md", "REASONIX.md"] = Field("REASONIX.local.md", json_schema_extra=anything())
    """Where ``remember`` and ``/remember`` write (``REASONIX.md`` is the shared, committed one)."""


class JobsConfig(_Section):
    """Background jobs (``bash`` with ``background = true``, ``job_output``, ``job_kill``)."""

    enabled: bool = Field(False, json_schema_extra=tighter("false-wins"))
    """Give the executor background jobs (the parameter and two tools join the prefix; off, bytes are as before)."""
    max_running: int = Field(4, ge=1, le=32, json_schema_extra=tighter("smaller"))
    """Jobs one session may run at once."""


class AgentsConfig(_Section):
    """Subagents (:mod:`orchestrator.subagents`): how many run at once, the requests all of a session's may send."""

    max_parallel: int = Field(3, ge=1, le=16, json_schema_extra=tighter("smaller"))
    max_requests: int = Field(200, ge=1, le=MAX_AGENT_REQUESTS, json_schema_extra=tighter("smaller"))


class Config(_Section):
    base_url: str = Field("https://api.deepseek.com", json_schema_extra=nothing())
    api_key_env: str = Field("DEEPSEEK_API_KEY", json_schema_extra=nothing())
    """The name of the environment variable that holds the key (else ``api_key`` in the user file, from setup)."""
    thinking: bool = Field(True, json_schema_extra=anything())
    """Thinking mode. Fixed for the life of a session."""
    reasoning_effort: ReasoningEffort = Field("high", json_schema_extra=anything())
    """Fixed for the life of a session."""
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    client: ClientConfig = Field(default_factory=ClientConfig)
    prices: PricesConfig = Field(default_factory=PricesConfig)
    goal: GoalConfig = Field(default_factory=GoalConfig)
    repair: RepairConfig = Field(default_factory=RepairConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    conversation: ConversationConfig = Field(default_factory=ConversationConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    """MCP servers (``[mcp.servers.NAME]``; the workspace's ``.mcp.json`` too, below this file)."""
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    jobs: JobsConfig = Field(default_factory=JobsConfig)
    hooks: list[HookConfig] = Field(default_factory=list, json_schema_extra=nothing())
    """``[[hooks]]``: every file's hooks run, the user's first (:mod:`orchestrator.config.hooks`)."""
    providers: list[ProviderConfig] = Field(default_factory=list, json_schema_extra=nothing())  # config/providers.py
    roles: RolesConfig = Field(default_factory=RolesConfig)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"expected an http(s) URL such as https://api.deepseek.com, got {value!r}")
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError(f"expected the name of an environment variable such as DEEPSEEK_API_KEY, got {value!r}")
        return value

    def client_settings_kwargs(self) -> dict[str, float | int]:
        """Keyword arguments for ``sessions.wire.client.ClientSettings``."""
        return {
            "deadline_s": self.client.deadline_s,
            "stall_timeout_s": self.client.stall_timeout_s,
            "max_attempts": self.client.max_attempts,
            "max_reply_chars": self.client.max_reply_chars,
        }

    def sandbox_policy(self, mode: str | None = None) -> SandboxPolicy:
        """The sandbox policy (``mode`` from ``--sandbox`` wins); the ``api_key_env`` variable is never passed."""
        s = self.sandbox
        chosen = mode or s.mode
        if chosen not in SANDBOX_MODES:
            raise ValueError(f"--sandbox: expected one of {', '.join(SANDBOX_MODES)}, got {chosen!r}")
        return SandboxPolicy(
            mode=chosen,
            network=s.network,
            forbid_read=(*s.forbid_read, str(key_path())),  # the key that seals runs: no command reads it
            writable=tuple(Path(p).expanduser() for p in s.writable),
            env=tuple(s.env),
            secret_env=tuple(dict.fromkeys((self.api_key_env, "DEEPSEEK_API_KEY"))),
            tmp_mb=s.tmp_mb,
            max_processes=s.max_processes,
            memory_mb=s.memory_mb,
        )

    def price_book(self) -> PriceBook:
        """The shipped dated tables, with this configuration's overrides winning where it has any; a
        ``[[providers]]`` entry's prices (or ``free``) price its model, and one with neither is unpriced."""
        book = default_price_book()
        p = self.prices
        families, unpriced = provider_prices(self.providers, p.families, lambda m: m in p.aliases or book.knows(m))
        book = book.with_unpriced(unpriced) if unpriced else book
        if not (families or p.aliases or p.off_peak_multiplier is not None):
            return book
        return book.with_overrides(families, aliases=p.aliases, off_peak_multiplier=p.off_peak_multiplier)


@dataclass(frozen=True)
class ResolvedConfig:
    """The configuration in force, the API key, and where each value came from."""

    config: Config
    api_key: str | None = field(repr=False)
    sources: dict[str, str]
    """Dotted key -> ``default``, a file path, ``environment`` or ``command line``; ``api_key`` -> its env var."""
    files: tuple[Path, ...] = ()
    """The configuration files that were read, lowest precedence first."""
    notice: str | None = None
    """What untrusted workspace files set and did not get, in one sentence naming the keys and ``reasonix trust``
    (every front end that sets up commands shows it: :func:`orchestrator.policy.commands.command_setup`)."""

    def __repr__(self) -> str:
        key = "None" if self.api_key is None else "'***'"
        return f"ResolvedConfig(config={self.config!r}, api_key={key}, sources={self.sources!r}, files={self.files!r})"

    __str__ = __repr__


def _alias_problems(config: Config, sources: Mapping[str, str]) -> list[ConfigProblem]:
    book = default_price_book()
    known = {f for t in book.tables for f in t.families} | set(config.prices.families)
    return [
        ConfigProblem(
            sources.get(f"prices.aliases.{model}", DEFAULT_SOURCE),
            f"prices.aliases.{model}",
            f"maps to {family!r}, which has no price; expected one of {', '.join(sorted(known))} "
            f"or a family defined under [prices.families]",
        )
        for model, family in config.prices.aliases.items()
        if family not in known
    ]


def user_config_path(env: Mapping[str, str], user_config_dir: Path | None = None) -> Path:
    """``$XDG_CONFIG_HOME/reasonix/config.toml``; a relative XDG_CONFIG_HOME is ignored, as the spec says."""
    if user_config_dir is not None:
        return user_config_dir / USER_FILE
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path(env.get("HOME") or Path.home()) / ".config"
    return base / "reasonix" / USER_FILE


def load_config(
    *,
    workspace: Path,
    flags: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> ResolvedConfig:
    """Resolve the configuration (see the module docstring). Raises :class:`ConfigError` naming file and key."""
    env = os.environ if env is None else env
    layers: list[tuple[str, dict[str, Any]]] = []
    untrusted: set[str] = set()  # the workspace files the user has not trusted as they are: they merge only tighter
    files: list[Path] = []
    user_file = user_config_path(env, user_config_dir)
    store = trust_path(user_file)
    trust_problems: list[ConfigProblem] = []
    file_key: str | None = None
    key_problems: list[ConfigProblem] = []
    for path in (user_file, workspace / MCP_FILE, workspace / PROJECT_FILE, workspace / LOCAL_FILE):
        within = None if path == user_file else workspace  # a workspace file: read through the gateway
        data = read_mcp_json(path) if path.name == MCP_FILE else read_toml(path, within=within)
        if data is not None and KEY_FIELD in data:
            data = dict(data)
            value = data.pop(KEY_FIELD)
            if path != user_file:
                key_problems.append(ConfigProblem(str(path), KEY_FIELD, KEY_ONLY_IN_USER_FILE))
            elif not isinstance(value, str) or not value.strip():
                key_problems.append(ConfigProblem(str(path), KEY_FIELD, "expected the key as a non-empty string"))
            else:
                file_key = value.strip()
        if data is not None:
            layers.append((str(path), data))
            files.append(path)
            if path != user_file:
                trust_problems.extend(untrusted_problems(path, data, store))
                if not is_trusted(store, path):
                    untrusted.add(str(path))
    env_values: dict[str, object] = {}
    if env.get(ENV_BASE_URL, "").strip():
        env_values["base_url"] = env[ENV_BASE_URL].strip()
    if env_values:
        layers.append((ENV_SOURCE, unflatten(env_values)))
    flag_values = {k: v for k, v in (flags or {}).items() if v is not None}
    if flag_values:
        layers.append((FLAG_SOURCE, unflatten(flag_values)))

    problems: list[ConfigProblem] = list(key_problems)
    for source, data in layers:
        problems.extend(validate_layer(Config, source, data))
    problems.extend(trust_problems)
    hooks, hook_origins, hook_problems = collect_hooks(layers, str(user_file))
    problems.extend(hook_problems)
    if problems:
        raise ConfigError(problems)

    merged: dict[str, Any] = {}
    defaults = Config().model_dump(mode="python")
    sources = dict.fromkeys(flatten(defaults), DEFAULT_SOURCE)
    ignored: dict[str, list[str]] = {}
    for source, data in layers:
        if source in untrusted:
            below = merged
            merged, ignored[source] = merge_untrusted(merged, data, defaults, Config)
            changed = [k for k in flatten(data) if lookup_dotted(merged, k)[1] != lookup_dotted(below, k)[1]]
            sources.update(dict.fromkeys(changed, source))
            continue
        merged = deep_merge(merged, data)
        sources.update(dict.fromkeys(flatten(data), source))
    if hooks:
        merged["hooks"] = hooks
        sources.update({f"hooks.{i}": origin for i, origin in enumerate(hook_origins)})
    problems = sandbox_key_problems(sources, str(user_file))
    if problems:
        raise ConfigError(problems)
    config = Config.model_validate(merged)
    problems = _alias_problems(config, sources)
    if problems:
        raise ConfigError(problems)

    key = env.get(config.api_key_env, "").strip() or None
    sources["api_key"] = f"${config.api_key_env}" if key else f"${config.api_key_env} (not set)"
    if key is None and file_key is not None:
        key, sources["api_key"] = file_key, str(user_file)
    notice = ignored_notice(ignored, workspace)
    return ResolvedConfig(config=config, api_key=key, sources=sources, files=tuple(files), notice=notice)
