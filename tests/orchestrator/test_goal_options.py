"""GoalOptions takes its defaults and its bounds from the configuration (and a session's settings): one rule each."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from orchestrator.config.model import Config, GoalConfig, RepairConfig
from orchestrator.goal.context import GoalOptions
from sessions.session import SessionSettings


def test_goal_options_default_to_the_configurations_defaults() -> None:
    config, session, options = Config(), SessionSettings(), GoalOptions()
    assert (options.flash_model, options.pro_model) == (config.models.flash, config.models.pro)
    assert (options.thinking, options.reasoning_effort) == (config.thinking, config.reasoning_effort)
    assert (options.parallel, options.retry_from_checkpoint) == (
        config.goal.parallel,
        config.goal.retry_from_checkpoint,
    )
    assert options.max_text_calls == config.repair.max_text_calls
    assert (options.context_window, options.max_requests_per_turn) == (
        session.context_window,
        session.max_requests_per_turn,
    )


def _accepts(make: type[BaseModel], **fields: int) -> bool:
    try:
        make(**fields)
    except ValidationError:
        return False
    return True


@given(st.integers(min_value=-5, max_value=40))
def test_goal_options_and_the_configuration_accept_the_same_parallel(value: int) -> None:
    assert _accepts(GoalOptions, parallel=value) == _accepts(GoalConfig, parallel=value) == (1 <= value <= 16)


@given(st.integers(min_value=-5, max_value=40))
def test_goal_options_and_the_configuration_accept_the_same_max_text_calls(value: int) -> None:
    same = _accepts(GoalOptions, max_text_calls=value) == _accepts(RepairConfig, max_text_calls=value)
    assert same and _accepts(GoalOptions, max_text_calls=value) == (0 <= value <= 20)


def test_goal_options_refuse_more_parallel_steps_than_the_configuration_allows() -> None:
    with pytest.raises(ValidationError, match="less than or equal to 16"):
        GoalOptions(parallel=17)


def test_each_role_gets_its_providers_context_window_and_every_max_output() -> None:
    """[[providers]] context_window: the executor's entry sets the goal's window, the planner's entry its own;
    max_output of every entry, by model id, for both sessions. Without providers: the defaults, nothing added."""
    from orchestrator.build import goal_options

    entries = [
        {"name": "big", "kind": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "big-m", "free": True,
         "context_window": 32768, "max_output": 4096},
        {"name": "small", "kind": "openai", "base_url": "http://127.0.0.1:2/v1", "model": "small-m", "free": True,
         "context_window": 8192},
    ]  # fmt: skip
    config = Config.model_validate({"providers": entries, "roles": {"executor": "big", "planner": "small"}})
    options = goal_options(config)
    assert (options.flash_model, options.planner_model) == ("big-m", "small-m")
    assert (options.context_window, options.planner_context_window) == (32768, 8192)
    assert options.max_output == {"big-m": 4096}
    plain = goal_options(Config())
    assert (plain.context_window, plain.planner_context_window, plain.max_output) == (
        SessionSettings().context_window,
        None,
        {},
    )
