"""Configuration resolution and its error messages, on real files in temporary directories."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.config.messages import leaf_keys
from orchestrator.config.model import Config, load_config, user_config_path
from orchestrator.config.trust import record_trust, trust_path
from orchestrator.errors import ConfigError
from sessions.accounting.prices import UnknownModelPriceError
from sessions.wire.messages import Usage


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    user = tmp_path / "xdg" / "reasonix"
    workspace.mkdir()
    user.mkdir(parents=True)
    return workspace, user


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def error_of(workspace: Path, user: Path, **kwargs: object) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(workspace=workspace, user_config_dir=user, env={}, **kwargs)  # type: ignore[arg-type]
    return info.value


# ------------------------------------------------------------------------------------------------ resolution


def test_defaults_without_any_file(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    resolved = load_config(workspace=workspace, user_config_dir=user, env={})
    c = resolved.config
    assert c.base_url == "https://api.deepseek.com"
    assert c.api_key_env == "DEEPSEEK_API_KEY"
    assert (c.models.flash, c.models.pro) == ("deepseek-v4-flash", "deepseek-v4-pro")
    assert c.thinking is True and c.reasoning_effort == "high"
    assert resolved.api_key is None
    assert resolved.files == ()
    assert set(resolved.sources.values()) == {"default", "$DEEPSEEK_API_KEY (not set)"}


def test_precedence_flag_env_project_user_default(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    user_file = write(
        user / "config.toml",
        'base_url = "https://user.example"\nthinking = false\n[models]\nflash = "user-flash"\npro = "user-pro"\n'
        "[client]\ndeadline_s = 30\n",
    )
    project_file = write(
        workspace / "reasonix.toml",
        'base_url = "https://project.example"\n[models]\nflash = "project-flash"\n[client]\nmax_attempts = 2\n',
    )
    record_trust(trust_path(user / "config.toml"), [project_file])
    resolved = load_config(
        workspace=workspace,
        user_config_dir=user,
        env={"DEEPSEEK_BASE_URL": "https://env.example/"},
        flags={"models.flash": "flag-flash", "client.stall_timeout_s": 7.5, "reasoning_effort": None},
    )
    c = resolved.config
    assert c.base_url == "https://env.example"  # env beats both files; the trailing slash goes
    assert c.models.flash == "flag-flash"  # flag beats project beats user
    assert c.models.pro == "user-pro"  # user beats default
    assert c.thinking is False
    assert c.reasoning_effort == "high"  # a None flag is "not given"
    assert c.client_settings_kwargs() == {
        "deadline_s": 30.0,
        "stall_timeout_s": 7.5,
        "max_attempts": 2,
        "max_reply_chars": 4_000_000,
    }
    assert resolved.files == (user_file, project_file)
    assert resolved.sources["base_url"] == "environment"
    assert resolved.sources["models.flash"] == "command line"
    assert resolved.sources["models.pro"] == str(user_file)
    assert resolved.sources["client.max_attempts"] == str(project_file)
    assert resolved.sources["reasoning_effort"] == "default"

    flagged = load_config(
        workspace=workspace,
        user_config_dir=user,
        env={"DEEPSEEK_BASE_URL": "https://env.example"},
        flags={"base_url": "http://127.0.0.1:9"},
    )
    assert flagged.config.base_url == "http://127.0.0.1:9"


def test_xdg_config_home_and_home_fallback(tmp_path: Path) -> None:
    assert user_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "reasonix" / "config.toml"
    assert user_config_path({"XDG_CONFIG_HOME": "relative", "HOME": str(tmp_path)}) == (
        tmp_path / ".config" / "reasonix" / "config.toml"
    )
    write_dir = tmp_path / "reasonix"
    write_dir.mkdir()
    write(write_dir / "config.toml", '[models]\npro = "from-xdg"\n')
    resolved = load_config(workspace=tmp_path / "nowhere", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert resolved.config.models.pro == "from-xdg"


def test_api_key_from_the_configured_variable_and_never_shown(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    secret = "sk-very-secret-0123456789"
    resolved = load_config(workspace=workspace, user_config_dir=user, env={"DEEPSEEK_API_KEY": secret})
    assert resolved.api_key == secret
    assert resolved.sources["api_key"] == "$DEEPSEEK_API_KEY"
    assert secret not in repr(resolved) and secret not in str(resolved)
    assert "'***'" in repr(resolved)

    record_trust(trust_path(user / "config.toml"), [write(workspace / "reasonix.toml", 'api_key_env = "MY_DS_KEY"\n')])
    other = load_config(
        workspace=workspace, user_config_dir=user, env={"DEEPSEEK_API_KEY": secret, "MY_DS_KEY": " sk-2 "}
    )
    assert other.api_key == "sk-2"
    assert other.sources["api_key"] == "$MY_DS_KEY"
    empty = load_config(workspace=workspace, user_config_dir=user, env={"MY_DS_KEY": ""})
    assert empty.api_key is None


# ---------------------------------------------------------------------------------------------------- errors


def test_wrong_type_names_file_key_and_type(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    path = write(workspace / "reasonix.toml", '[client]\nstall_timeout_s = "fast"\n')
    err = error_of(workspace, user)
    assert str(err) == f'{path}: client.stall_timeout_s: expected a number, got "fast"'
    assert (err.source, err.key) == (str(path), "client.stall_timeout_s")


@pytest.mark.parametrize(
    ("toml", "key", "message"),
    [
        ('thinking = "yes"', "thinking", 'expected true or false, got "yes"'),
        ('reasoning_effort = "extreme"', "reasoning_effort", "expected one of 'low', 'medium', 'high' or 'max'"),
        ("[client]\nmax_attempts = 2.5", "client.max_attempts", "expected an integer, got 2.5"),
        ("[client]\nmax_attempts = 0", "client.max_attempts", "expected a number at least 1, got 0"),
        ("[client]\ndeadline_s = -1", "client.deadline_s", "expected a number greater than 0, got -1"),
        ("[client]\ndeadline_s = nan", "client.deadline_s", "expected a finite number"),
        ('models = "flash"', "models", 'expected a table, got "flash"'),
        ('[models]\nflash = ""', "models.flash", "expected a non-empty string"),
        ('base_url = "api.deepseek.com"', "base_url", "expected an http(s) URL"),
        ('api_key_env = "sk-abc"', "api_key_env", "expected the name of an environment variable"),
        ("[prices.families.flash]\nhit = 1\nmiss = 1", "prices.families.flash.output", "missing"),
        ('[prices.families.flash]\nhit = "x"\nmiss = 1\noutput = 1', "prices.families.flash.hit", "a number"),
        ("[prices]\noff_peak_multiplier = 2", "prices.off_peak_multiplier", "at most 1"),
    ],
)
def test_value_errors(dirs: tuple[Path, Path], toml: str, key: str, message: str) -> None:
    workspace, user = dirs
    write(workspace / "reasonix.toml", toml + "\n")
    err = error_of(workspace, user)
    assert err.key == key
    assert message in str(err)


@pytest.mark.parametrize(
    ("toml", "key", "suggestion"),
    [
        ("[client]\nstall_timeout = 3", "client.stall_timeout", "client.stall_timeout_s"),
        ("stall_timeout_s = 3", "stall_timeout_s", "client.stall_timeout_s"),
        ('[modles]\nflash = "x"', "modles", "models"),
        ("thinkng = true", "thinkng", "thinking"),
        (
            "[prices.families.pro]\nhit = 1\nmiss = 1\noutptu = 1\noutput = 1",
            "prices.families.pro.outptu",
            "prices.families.pro.output",
        ),
    ],
)
def test_unknown_key_suggests_the_closest(dirs: tuple[Path, Path], toml: str, key: str, suggestion: str) -> None:
    workspace, user = dirs
    write(user / "config.toml", toml + "\n")
    err = error_of(workspace, user)
    assert err.source == str(user / "config.toml")
    assert err.key == key
    assert f"unknown key (did you mean {suggestion}?)" in str(err)


def test_unknown_key_far_from_anything(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(workspace / "reasonix.toml", "zzzzzz = 1\n")
    assert "unknown key" in str(error_of(workspace, user))


def test_every_bad_key_in_every_file_is_reported(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(user / "config.toml", "thinking = 1\n")
    write(workspace / "reasonix.toml", 'reasoning_effort = 3\n[client]\ndeadline_s = "soon"\n')
    err = error_of(workspace, user)
    assert [(p.source, p.key) for p in err.problems] == [
        (str(user / "config.toml"), "thinking"),
        (str(workspace / "reasonix.toml"), "reasoning_effort"),
        (str(workspace / "reasonix.toml"), "client.deadline_s"),
    ]


def test_invalid_toml_names_the_file_and_line(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    path = write(workspace / "reasonix.toml", 'base_url = "https://x"\nthinking = \n')
    err = error_of(workspace, user)
    assert err.source == str(path) and err.key is None
    assert "invalid TOML" in str(err) and "line 2" in str(err)


def test_unreadable_and_non_utf8_files(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    (workspace / "reasonix.toml").mkdir()
    assert "cannot read the file" in str(error_of(workspace, user))
    (workspace / "reasonix.toml").rmdir()
    (workspace / "reasonix.toml").write_bytes(b'base_url = "\xff"\n')
    assert "not UTF-8" in str(error_of(workspace, user))


def test_bad_env_and_flags_name_their_source(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    with pytest.raises(ConfigError, match=r"^environment: base_url: expected an http"):
        load_config(workspace=workspace, user_config_dir=user, env={"DEEPSEEK_BASE_URL": "localhost:8000"})
    with pytest.raises(ConfigError, match=r'^command line: client.deadline_s: expected a number, got "30"'):
        load_config(workspace=workspace, user_config_dir=user, env={}, flags={"client.deadline_s": "30"})


# ----------------------------------------------------------------------------------------------------- prices


def test_price_overrides_win_and_price_new_models(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(  # the user's own file: a workspace's prices count only once trusted (issue 43 item 8)
        user / "config.toml",
        "[prices.families.flash]\nhit = 0.01\nmiss = 0.5\noutput = 2\n"
        '[prices.families."my-model"]\nhit = 0\nmiss = 1\noutput = 1\n'
        '[prices.aliases]\n"ds-alias" = "pro"\n',
    )
    config = load_config(workspace=workspace, user_config_dir=user, env={}).config
    book = config.price_book()
    usage = Usage(prompt_tokens=374, completion_tokens=61, prompt_cache_hit_tokens=256, prompt_cache_miss_tokens=118)
    at = datetime(2026, 9, 14, 2, tzinfo=UTC)
    flash = book.cost(usage, "deepseek-v4-flash", at)
    assert flash.table_from is None  # the override table
    assert flash.total == Decimal("0.00018356")  # (256*0.01 + 118*0.5 + 61*2) / 1M
    assert book.cost(usage, "my-model", at).total == Decimal("0.000179")
    assert book.cost(usage, "ds-alias", at).family == "pro"
    with pytest.raises(UnknownModelPriceError):
        Config().price_book().cost(usage, "my-model", at)


def test_price_alias_to_unknown_family_is_a_config_error(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    path = write(user / "config.toml", '[prices.aliases]\n"x" = "ultra"\n')
    err = error_of(workspace, user)
    assert (err.source, err.key) == (str(path), "prices.aliases.x")
    assert "'ultra'" in str(err) and "flash, pro" in str(err)


# ------------------------------------------------------------------------------------------------- properties


def test_leaf_keys_cover_the_schema() -> None:
    assert "client.stall_timeout_s" in leaf_keys(Config)
    assert "models.pro" in leaf_keys(Config)
    assert "prices.families" in leaf_keys(Config)


@settings(max_examples=50, deadline=None)
@given(
    deadline=st.floats(min_value=0.001, max_value=1e6, allow_nan=False),
    attempts=st.integers(1, 20),
    effort=st.sampled_from(["low", "medium", "high", "max"]),
    thinking=st.booleans(),
)
def test_any_valid_file_round_trips(
    tmp_path_factory: pytest.TempPathFactory, deadline: float, attempts: int, effort: str, thinking: bool
) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "user").mkdir()
    write(  # the user's own file: an untrusted workspace's could only shorten the deadline or lower the attempts
        workspace / "user" / "config.toml",
        f'thinking = {"true" if thinking else "false"}\nreasoning_effort = "{effort}"\n'
        f"[client]\ndeadline_s = {deadline!r}\nmax_attempts = {attempts}\n",
    )
    c = load_config(workspace=workspace, user_config_dir=workspace / "user", env={}).config
    assert (c.thinking, c.reasoning_effort, c.client.deadline_s, c.client.max_attempts) == (
        thinking,
        effort,
        deadline,
        attempts,
    )


def test_the_cap_on_calls_taken_from_text_reaches_every_session(tmp_path: Path) -> None:
    from orchestrator.build import goal_options

    user = tmp_path / "user"
    user.mkdir()
    (user / "config.toml").write_text("[repair]\nmax_text_calls = 1\n")
    resolved = load_config(workspace=tmp_path / "ws", user_config_dir=user, env={})
    assert resolved.config.repair.max_text_calls == 1
    assert goal_options(resolved.config).max_text_calls == 1
    assert Config().repair.max_text_calls == 3
    with pytest.raises(ConfigError, match="max_text_calls"):
        (user / "config.toml").write_text("[repair]\nmax_text_calls = 99\n")
        load_config(workspace=tmp_path / "ws", user_config_dir=user, env={})
