"""How commands run for one invocation: the sandbox chosen from ``--sandbox`` / ``[sandbox]``, and the permission gate
from ``--permissions`` / ``[permissions]`` (DESIGN §5: the supervisor decides what runs, not the model).

* ``full-access`` is only ever explicit, and said in red;
* no sandbox available: said once (:attr:`CommandSetup.notice`), and every command then asks;
* ``ask`` is the default in a terminal for ``run``; ``goal`` runs its steps in ``auto`` (approving the plan approves
  its verify commands); deny rules refuse in every mode.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.config.model import LOCAL_FILE, ResolvedConfig, user_config_path
from orchestrator.config.trust import record_trust, trust_path
from orchestrator.errors import ConfigError, ConfigProblem
from sessions.permissions import ApprovalMode, Asker, PermissionGate, RuleError, Rules
from sessions.sandbox import Sandbox, describe, sandbox_for, sandbox_unavailable_reason


@dataclass(frozen=True)
class CommandSetup:
    sandbox: Sandbox
    gate: PermissionGate
    notice: str | None
    """Say once, before the first command: no sandbox here (and how to get one), or full-access."""

    @property
    def label(self) -> str:
        return describe(self.sandbox)

    @property
    def danger(self) -> bool:
        """Commands run with the user's full rights: show it in red."""
        return not self.sandbox.confines


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml(data: Mapping[str, Any], prefix: str = "") -> str:
    lines = [f"{key} = {_toml_value(v)}" for key, v in data.items() if not isinstance(v, Mapping)]
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, v in data.items():
        if isinstance(v, Mapping):
            name = f"{prefix}{key}"
            out += f"\n[{name}]\n" + _toml(v, name + ".")
    return out


def remember_rule(workspace: Path, rule: str, user_config_file: Path) -> None:
    """Add ``rule`` to ``[permissions] allow`` in ``reasonix.local.toml`` and trust the file as written: the user
    answered "always" just now."""
    path = workspace / LOCAL_FILE
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    allow = data.setdefault("permissions", {}).setdefault("allow", [])
    if rule not in allow:
        allow.append(rule)
    path.write_text(_toml(data), encoding="utf-8")
    record_trust(trust_path(user_config_file), [path])


def command_setup(
    resolved: ResolvedConfig,
    workspace: Path,
    *,
    sandbox_mode: str | None = None,
    permissions: str | None = None,
    default_permissions: ApprovalMode = "auto",
    asker: Asker | None = None,
    env: Mapping[str, str] | None = None,
) -> CommandSetup:
    """The sandbox and the gate. Raises :class:`ConfigError` for a rule that does not parse or a bad mode."""
    config = resolved.config
    try:
        policy = config.sandbox_policy(sandbox_mode)
    except ValueError as exc:
        raise ConfigError([ConfigProblem("command line", "sandbox", str(exc))]) from exc
    p = config.permissions
    try:
        rules = Rules.parse(p.allow, p.ask, p.deny)
    except RuleError as exc:
        source = resolved.sources.get("permissions.allow", "config")
        raise ConfigError([ConfigProblem(source, "permissions", str(exc))]) from exc
    mode: ApprovalMode = permissions or p.mode or default_permissions  # type: ignore[assignment]
    sandbox = sandbox_for(policy)
    notice = None
    if policy.mode == "full-access":
        notice = "full-access: commands run without a sandbox, with your full rights"
    elif not sandbox.confines:
        reason = sandbox_unavailable_reason() or "no sandbox"
        notice = f"no sandbox available ({reason}); every command will ask first"
    user_file = user_config_path(os.environ if env is None else env)

    def remember(rule: str) -> None:
        remember_rule(workspace, rule, user_file)

    gate = PermissionGate(rules, mode=mode, asker=asker, remember=remember)
    return CommandSetup(sandbox=sandbox, gate=gate, notice=notice)
