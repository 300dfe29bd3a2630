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
