"""Configuration: the model of ``reasonix.toml`` and how it is resolved (flags > environment > the project's
``reasonix.toml`` > the user's ``config.toml`` > defaults), the TOML reading and merging behind it, and the messages
that name the file, the dotted key and the expected type of a bad value. The errors are
:class:`~orchestrator.errors.ConfigError` / :class:`~orchestrator.errors.ConfigProblem`. Adding a key:
docs/DESIGN.md §9.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.config.model import (
        ClientConfig,
        Config,
        ModelsConfig,
        PricesConfig,
        ResolvedConfig,
        load_config,
        user_config_path,
    )

__all__ = [
    "ClientConfig",
    "Config",
    "ModelsConfig",
    "PricesConfig",
    "ResolvedConfig",
    "load_config",
    "user_config_path",
]

_HOME = {
    "ClientConfig": "model",
    "Config": "model",
    "ModelsConfig": "model",
    "PricesConfig": "model",
    "ResolvedConfig": "model",
    "load_config": "model",
    "user_config_path": "model",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
