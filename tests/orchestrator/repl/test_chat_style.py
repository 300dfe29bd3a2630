"""``reasonix chat``, the reply language, output styles and the price on screen, byte for byte against the emulator:
a chat sends no tools and each question hits the one before; a language rides in the tail, never the prefix; a style
is folded into the system prompt once and changing it starts a new session; costs turn yellow and red."""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from orchestrator.build import build_client
from orchestrator.config.model import ConversationConfig, load_config
from orchestrator.executor_prompt import CHAT_SYSTEM, EXECUTOR_RUN_SYSTEM
from orchestrator.policy.commands import command_setup
from orchestrator.repl import Conversation, ReplOptions
from orchestrator.repl.chat import CHAT_SESSION, ChatConversation, chat_commands
from orchestrator.repl.commands import dispatch
from orchestrator.repl.preferences.price import ALERT, WARN, cache_savings, cost_style, price_parts
from orchestrator.text.wording import usd
from scenarios.emulator import Script, open_emulator
from sessions.accounting import default_price_book
from sessions.journal import read_journal
from tests.support.conversation import Recording

from ..run_support import ROOT, clean_env, emulator_process, emulator_stats


def _ws(tmp_path: Path, user_toml: str = "") -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    if user_toml:
        (tmp_path / ".config" / "reasonix").mkdir(parents=True)
        (tmp_path / ".config" / "reasonix" / "config.toml").write_text(user_toml)
    return ws


def _conv(ws: Path, url: str, transport: Recording, *, chat: bool = False) -> Conversation:
    env = {"HOME": str(ws.parent)}
    resolved = load_config(workspace=ws, flags={"base_url": url}, env=env)
    commands = command_setup(resolved, ws, permissions="auto", env=env)
    kind = ChatConversation if chat else Conversation
    return kind(
        workspace=ws,
        resolved=resolved,
        commands=commands,
        console=Console(file=io.StringIO(), width=200),
        options=ReplOptions(mode="auto"),
        client=build_client(resolved, transport=transport),
    )


def _script(key: str, n: int) -> Script:
    replies = [{"content": f"Answer {i}."} for i in range(n)]
    return Script.model_validate({"sessions": [{"key": key, "replies": replies}]})


def _said(conv: Conversation) -> str:
    out = conv.console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


# ------------------------------------------------------------------------------------------------------- chat


async def test_a_chat_sends_no_tools_and_the_second_question_hits_the_first(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    transport = Recording()
    async with open_emulator(script=_script(CHAT_SESSION, 2), cache_unit=16) as emu:
        conv = _conv(ws, emu.base_url, transport, chat=True)
        async with conv.client:
            await conv.turn("What is a monad, in one sentence?")
            await conv.turn("And a functor?")
        stats = emu.stats()["total"]
    first, second = transport.bodies
    for body in (first, second):
        sent = json.loads(body)
        assert "tools" not in sent and "tool_choice" not in sent
        assert sent["messages"][0] == {"role": "system", "content": CHAT_SYSTEM}
        assert "<mode>" not in body.decode()  # a chat has no modes to announce
    assert second.startswith(first[:-2])  # the second request re-sends the first byte for byte
    # The whole first request is a hit (the emulator caches in 16-token units, as DeepSeek does in larger ones).
    assert stats["requests"] == 2 and 0 < stats["ideal_hit_tokens"] - 16 < stats["hit_tokens"]
    assert conv.journal_path.name == "chat.jsonl" and conv.journal_path.exists()
    assert "/plan" not in chat_commands() and "/undo" not in chat_commands()


def test_a_piped_question_is_answered_and_chat_exits(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = _ws(tmp_path)
    script = {"sessions": [{"key": "chat", "replies": [{"content": "Four."}]}]}
    with emulator_process(script, tmp_path, env) as url:
        done = subprocess.run(
            [sys.executable, "-m", "orchestrator", "chat", "--workspace", str(ws), "--base-url", url],
            input="what is 2+2?\n",
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )
        assert emulator_stats(url)["total"]["requests"] == 1
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Four.\n"


# --------------------------------------------------------------------------------------------------- language


async def test_the_language_rides_in_the_tail_and_the_prefix_never_moves(tmp_path: Path) -> None:
    ws = _ws(tmp_path, '[conversation]\nlanguage = "French"\n')
    transport = Recording()
    async with open_emulator(script=_script("executor", 3)) as emu:
        conv = _conv(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            await conv.turn("and now?")
            assert await dispatch(conv, "/language German")
            await conv.turn("once more")
    bodies = transport.bodies
    for before, after in itertools.pairwise(bodies):
        assert after.startswith(before[:-2]), "a language change rewrote bytes already sent"
    users = [m["content"] for m in json.loads(bodies[2])["messages"] if m["role"] == "user"]
    assert users[0].startswith("<mode>") and "<language>\nWrite your replies and your reasoning in French" in users[0]
    assert "<language>" not in users[1]  # unchanged: not sent again
    assert users[2].startswith("<language>\nWrite your replies and your reasoning in German")
    assert json.loads(bodies[0])["messages"][0]["content"] == EXECUTOR_RUN_SYSTEM  # never in the prefix


# ------------------------------------------------------------------------------------------------------ style


async def test_a_style_is_folded_into_the_system_prompt_once_and_changing_it_starts_a_new_session(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path, '[conversation]\nstyle = "terse"\n[conversation.styles]\nterse = "Answer in one line."\n')
    transport = Recording()
    async with open_emulator(script=_script("executor", 3)) as emu:
        conv = _conv(ws, emu.base_url, transport)
        first_journal = conv.journal_path
        async with conv.client:
            await conv.turn("hello")
            await conv.turn("again")
            assert await dispatch(conv, "/style explanatory")
            await conv.turn("after the switch")
    styled, again, switched = (json.loads(b)["messages"][0]["content"] for b in transport.bodies)
    assert styled == again == EXECUTOR_RUN_SYSTEM + "\n\n# Output style\n\nAnswer in one line."
    assert transport.bodies[1].startswith(transport.bodies[0][:-2])
    assert switched.startswith(EXECUTOR_RUN_SYSTEM + "\n\n# Output style\n\nExplain as you go")
    assert len(json.loads(transport.bodies[2])["messages"]) == 2  # a new session: system + the new message
    assert conv.journal_path != first_journal and first_journal.exists()
    assert "this is a new session" in _said(conv)


async def test_an_unknown_style_is_refused_and_the_session_stays(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    async with open_emulator(script=_script("executor", 1)) as emu:
        conv = _conv(ws, emu.base_url, Recording())
        journal = conv.journal_path
        async with conv.client:
            assert await dispatch(conv, "/style baroque")
    assert conv.journal_path == journal and conv.style is None
    assert "no output style 'baroque': choose one of concise, explanatory" in _said(conv)


async def test_without_a_style_or_language_the_bytes_are_the_plain_executors(tmp_path: Path) -> None:
    from orchestrator.build import build_executor

    ws = _ws(tmp_path)
    async with open_emulator(script=_script("executor", 1)) as emu:
        conv = _conv(ws, emu.base_url, Recording())
        plain = build_executor(conv.resolved, ws, conv.client, journal_path=None)
        assert conv.session.prefix.system_bytes == plain.prefix.system_bytes
        assert conv.session.prefix.tools_bytes == plain.prefix.tools_bytes
        await conv.client.aclose()


# ------------------------------------------------------------------------------------------------------ price


def test_costs_turn_yellow_then_red_past_their_thresholds() -> None:
    talk = ConversationConfig()
    assert (talk.turn_warn_usd, talk.turn_alert_usd) == (0.05, 0.20)
    assert [cost_style(x, 0.05, 0.20) for x in (0.01, 0.05, 0.06, 0.20, 0.21)] == ["", "", WARN, WARN, ALERT]
    parts = price_parts(0.10, 6.0, talk)
    assert parts == [("", " · turn "), (WARN, "$0.1000"), ("", " · "), (ALERT, "$6.0000")]


async def test_the_status_line_and_cost_show_the_price_with_and_without_the_cache(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "[conversation]\nturn_warn_usd = 0.0\nturn_alert_usd = 1.0\n")
    async with open_emulator(script=_script("executor", 2), cache_unit=16) as emu:
        conv = _conv(ws, emu.base_url, Recording())
        async with conv.client:
            await conv.turn("hello")
            await conv.turn("again")
            assert await dispatch(conv, "/cost")
    status = list(conv.status())
    assert (WARN, usd(conv.turn_cost_usd)) in status  # past $0.00: yellow; under $1: not red
    said = _said(conv)
    assert "without the cache this conversation would have cost $" in said
    assert "balance 42.00 USD" in said and conv.balance == "42.00 USD"
    events = read_journal(conv.journal_path).events
    savings = cache_savings(events, default_price_book(), conv.session.ledger.clock())
    assert savings.paid_usd == conv.session.cost_usd
    assert savings.uncached_usd > savings.paid_usd  # the second request hit the first: it was cheaper
    assert ("", " · balance 42.00 USD") in status


def test_chat_in_a_terminal_is_a_repl_without_the_commands_that_change_things(tmp_path: Path) -> None:
    import pexpect

    env = clean_env(tmp_path)
    ws = _ws(tmp_path)
    script = {"sessions": [{"key": "chat", "replies": [{"content": "A monad is a monoid."}, {"content": "Yes."}]}]}
    with emulator_process(script, tmp_path, env) as url:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator", "chat", "--workspace", str(ws), "--base-url", url],
            env={**env, "TERM": "xterm"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 160),
        )
        child.expect("chat ❯")
        child.sendline("what is a monad?")
        child.expect("A monad is a monoid.")
        child.expect("chat ❯")
        child.sendline("/cost")
        child.expect(r"session (\$\S+) · (1 requests?) · prompt")
        cost, requests = child.match.group(1), child.match.group(2)
        child.expect("chat ❯")
        child.sendline("/help")
        child.expect("/exit")
        helped = child.before
        child.expect("chat ❯")
        keys = child.before
        child.sendline("/plan take over")
        child.expect("unknown command /plan")
        child.expect("chat ❯")
        child.sendline("sure?")
        child.expect("Yes.")
        child.expect("chat ❯")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
        stats = emulator_stats(url)
    assert child.exitstatus == 0
    assert "/cost" in helped and "/plan" not in helped and "/undo" not in helped
    # Issue 48 item 25: no keys that do nothing in a chat, "1 request", and a small cost not rounded to $0.0000.
    assert "Ctrl-D" in keys and "Shift+Tab" not in keys and "Esc Esc" not in keys
    assert requests == "1 request" and cost != "$0.0000" and float(cost[1:]) > 0, (cost, requests)
    assert stats["total"]["requests"] == 2
