"""``reasonix doctor`` checks each ``[[providers]]`` entry (issue 46), against real HTTP servers on loopback: one that
lists the entry's model, one that lists others, one without a model list, one that refuses the key, and a port
nothing listens on. Each line says which roles use the entry and whether it is priced."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.main import main

from .providers_support import closed_port_url, models_server

KEY = "sk-provider-doctor-0123456789"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def configure(home: Path, text: str) -> None:
    path = home.parent / "xdg" / "reasonix" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def entry(name: str, url: str, model: str, extra: str = "") -> str:
    return f'[[providers]]\nname = "{name}"\nkind = "openai"\nbase_url = "{url}"\nmodel = "{model}"\n{extra}\n'


def doctor(capsys: pytest.CaptureFixture[str], home: Path, *argv: str) -> tuple[int, dict[str, str], str]:
    code = main(["doctor", "--workspace", str(home), "--timeout", "5", *argv])
    out = capsys.readouterr().out
    lines = {x[2:].split(":", 1)[0]: x for x in out.splitlines() if x[:1] in "✓✗–"}
    return code, lines, out


def test_a_server_that_lists_the_model_passes_and_says_the_roles(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with models_server(200, ("other-model", "local-coder")) as (url, seen):
        configure(
            home,
            entry("llama-local", url, "local-coder", "free = true")
            + '[roles]\nexecutor = "llama-local"\nplanner = "llama-local"\n',
        )
        code, lines, out = doctor(capsys, home)
    assert code == 0, out
    got = lines["provider llama-local"]
    assert got.startswith("✓") and "local-coder listed" in got
    assert "free" in got and "used by executor, planner, escalation" in got
    assert seen == [""]  # no api_key_env: no key is sent
    # no role uses DeepSeek: its key (unset here) is not asked for, and the run is not failed for it
    assert lines["API key"].startswith("– API key: not checked: no role uses DeepSeek")


def test_a_server_that_lists_other_models_fails_with_the_names_it_lists(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with models_server(200, ("qwen2.5-coder-0.5b",)) as (url, _):
        configure(home, entry("llama-local", url, "qwen-7b") + '[roles]\nexecutor = "llama-local"\n')
        code, lines, out = doctor(capsys, home)
    assert code == 1
    got = lines["provider llama-local"]
    assert got.startswith("✗") and "qwen-7b is not among the models it lists (qwen2.5-coder-0.5b)" in got
    assert "unpriced: its requests count as $0 and a dollar budget refuses to run on it" in got
    assert "fix: set model of the [[providers]] entry llama-local to one of them" in out
    assert "1 required check failed: provider llama-local" in out


def test_a_server_without_a_model_list_is_reachable_and_the_model_unchecked(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with models_server(404, ()) as (url, _):
        configure(home, entry("gateway", url, "some/model", "prices = { hit = 0.1, miss = 0.5, output = 2 }"))
        _code, lines, out = doctor(capsys, home)
    got = lines["provider gateway"]
    assert got.startswith("✓"), out
    assert "it lists no models, so some/model is unchecked" in got
    assert "priced 0.1 / 0.5 / 2 USD per 1M tokens" in got
    assert "used by no role (--model gateway picks it)" in got


def test_a_refused_key_fails_and_names_the_variable_never_the_key(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_KEY", KEY)
    with models_server(200, ("local-coder",), key="sk-the-right-one") as (url, seen):
        configure(
            home,
            entry("vllm", url, "local-coder", 'api_key_env = "LOCAL_KEY"\nfree = true')
            + '[roles]\nexecutor = "vllm"\n',
        )
        code, lines, out = doctor(capsys, home)
    assert code == 1
    got = lines["provider vllm"]
    assert got.startswith("✗") and "→ 401: the key was refused" in got
    assert "check the key in $LOCAL_KEY" in out
    assert seen == [f"Bearer {KEY}"] and KEY not in out
    monkeypatch.setenv("LOCAL_KEY", "sk-the-right-one")
    with models_server(200, ("local-coder",), key="sk-the-right-one") as (url, _):
        configure(
            home,
            entry("vllm", url, "local-coder", 'api_key_env = "LOCAL_KEY"\nfree = true')
            + '[roles]\nexecutor = "vllm"\n',
        )
        code, lines, out = doctor(capsys, home)
    assert code == 0 and "key accepted, local-coder listed" in lines["provider vllm"], out


def test_an_unreachable_port_fails_for_a_role_and_only_warns_for_an_unused_entry(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = closed_port_url()
    configure(home, entry("llama-local", url, "local-coder", "free = true") + '[roles]\nexecutor = "llama-local"\n')
    code, lines, out = doctor(capsys, home)
    assert code == 1
    got = lines["provider llama-local"]
    assert got.startswith("✗") and f"cannot reach {url}/models" in got
    assert "fix: start the server, or correct base_url of the [[providers]] entry llama-local" in out
    configure(home, entry("spare", url, "local-coder", "free = true"))
    code, lines, out = doctor(capsys, home, "--offline")
    assert lines["provider spare"].startswith("– provider spare") and "not checked (--offline)" in out
    code, lines, out = doctor(capsys, home)
    assert lines["provider spare"].startswith("– provider spare") and "cannot reach" in lines["provider spare"]


def test_a_role_that_names_no_entry_fails_with_the_entries(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(home, '[roles]\nexecutor = "llama-lokal"\n')
    code, lines, _out = doctor(capsys, home, "--offline")
    assert code == 1
    assert lines["roles"].startswith("✗") and "'llama-lokal', which is no provider" in lines["roles"]
