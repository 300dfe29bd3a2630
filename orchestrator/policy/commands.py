"""How commands run for one invocation: the sandbox chosen from ``--sandbox`` / ``[sandbox]``, and the permission gate
from ``--permissions`` / ``[permissions]`` (DESIGN §5: the supervisor decides what runs, not the model).

* ``full-access`` is only ever explicit, and said in red;
* no sandbox available: said once (:attr:`CommandSetup.notice`), and every command then asks (a goal's verify
  commands too: :class:`orchestrator.policy.verify.UnconfinedVerify`);
* ``ask`` is the default in a terminal for ``run``; ``goal`` runs its steps in ``auto`` (approving the plan approves
  its verify commands); deny rules refuse in every mode.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from orchestrator.config.model import ResolvedConfig, user_config_path
from orchestrator.config.rules_file import RuleFileError, remember_rule
from orchestrator.config.trust import trust_path
from orchestrator.errors import ConfigError, ConfigProblem
from orchestrator.hooks.gate import HookGate
from orchestrator.hooks.hooks import Hooks
from orchestrator.text.safe_text import neutralise
from sessions.permissions import ApprovalMode, Asker, PermissionGate, RuleError, Rules
from sessions.sandbox import Sandbox, describe, sandbox_for, sandbox_unavailable_reason


@dataclass(frozen=True)
class CommandSetup:
    sandbox: Sandbox
    gate: PermissionGate
    notice: str | None
    """Say once, before the first command: no sandbox here (and how to get one), or full-access."""
    hooks: Hooks | None = None
    """The configured hooks (``None``: none configured and none asked for); ``gate`` is then a :class:`HookGate` that
    runs them."""

    @property
    def label(self) -> str:
        return describe(self.sandbox)

    @property
    def danger(self) -> bool:
        """Commands run with the user's full rights: show it in red."""
        return not self.sandbox.confines


def command_setup(
    resolved: ResolvedConfig,
    workspace: Path,
    *,
    sandbox_mode: str | None = None,
    permissions: str | None = None,
    default_permissions: ApprovalMode = "auto",
    asker: Asker | None = None,
    env: Mapping[str, str] | None = None,
    on_notice: Callable[[str], None] | None = None,
    caller_hooks: bool = False,
) -> CommandSetup:
    """The sandbox and the gate. Raises :class:`ConfigError` for a rule that does not parse or a bad mode.
    ``on_notice`` hears why an "always" rule was not saved (default: standard error). ``caller_hooks``: the hooks
    and their gate even with none configured, for a caller to register its own (``reasonix -p`` under the SDKs)."""
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
        notice = (
            f"no sandbox available ({reason}); every command will ask first, and a goal's verify commands run only "
            "once you approve them at the plan review or pass --allow-unconfined-verify"
        )
    if resolved.notice:  # what an untrusted workspace file set and did not get: said once, with the rest
        notice = f"{resolved.notice}\n{notice}" if notice else resolved.notice
    store = trust_path(user_config_path(os.environ if env is None else env))

    def say(text: str) -> None:
        print(f"reasonix: {text}", file=sys.stderr, flush=True)

    def remember(rule: str) -> None:
        try:
            remember_rule(workspace, rule, store)
        except RuleFileError as exc:  # the rule is the model's text: shown with its control characters visible
            (on_notice or say)(neutralise(f"{rule} was not saved, it holds for this session only: {exc}"))

    if not config.hooks and not caller_hooks:
        gate = PermissionGate(rules, mode=mode, asker=asker, remember=remember)
        return CommandSetup(sandbox=sandbox, gate=gate, notice=notice)
    hooks = Hooks(config.hooks, workspace, sandbox=sandbox, on_notice=on_notice or say)
    gate = HookGate(rules, mode=mode, asker=asker, remember=remember, hooks=hooks)
    return CommandSetup(sandbox=sandbox, gate=gate, notice=notice, hooks=hooks)
