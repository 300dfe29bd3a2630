"""The environment of a command, by allowlist: :data:`~sessions.sandbox.policy.BASE_ENV` plus the names the policy
adds, never a secret the policy names, whatever else the parent holds (``*_PAT``, ``*_PASSWORD``, a renamed key)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from sessions.sandbox.policy import BASE_ENV, SandboxPolicy


def command_env(
    policy: SandboxPolicy, overrides: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``base`` (default ``os.environ``) filtered to the allowed names, then ``overrides``; secrets removed last."""
    base = os.environ if base is None else base
    allowed = (*BASE_ENV, *policy.env)
    env = {name: base[name] for name in allowed if name in base}
    env.update(overrides or {})
    secrets = {name.upper() for name in policy.secret_env}
    return {name: value for name, value in env.items() if name.upper() not in secrets}
