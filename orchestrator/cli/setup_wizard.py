"""``reasonix setup``: the first-run wizard, in the terminal.

1. The API key, pasted once without echo and checked against the API with ``GET /user/balance`` (which proves the key
   and shows the balance at once): a 401 says the API refused it and asks again; an API that cannot be reached says
   why and asks whether to keep the key anyway. A key already in the environment is checked instead of asked for.
2. Where the key lives: in the user config file (``api_key``, the file written with mode 0600 in a directory of mode
   0700), or left to the environment (nothing written; the wizard says what to export).
3. The default preset of goals (``[goal] preset``) and the sandbox of commands (``[sandbox] mode``), saying first when
   this machine has no working bubblewrap (the sandbox modes then cannot confine anything).
4. ``--base-url URL``: the key is checked against that URL, and the URL is saved beside it (``base_url``).

The user file is edited with tomlkit, so the user's other keys and comments stay. Ctrl-D at any question ends the
wizard and writes nothing. :func:`offer_setup` is what ``reasonix code`` and ``reasonix chat`` call when they start in a
terminal with no key for the real API.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import tomlkit
import trio

from orchestrator.config.endpoints import DEFAULT_BASE_URL
from orchestrator.config.model import KEY_FIELD, ResolvedConfig, load_config, user_config_path
from sessions.sandbox import sandbox_unavailable_reason
from sessions.wire import AuthenticationError, Balance, DeepSeekClient, DeepSeekError

PRESETS = ("flash", "auto", "pro")
SANDBOXES = ("workspace-write", "read-only", "full-access")
CHECK_TIMEOUT_S = 15.0
FILE_MODE = 0o600
DIR_MODE = 0o700

Ask = Callable[[str], str]
"""Ask a question, return the answer (raises EOFError when the user ends the input)."""


@dataclass
class Answers:
    key: str | None
    """The key to save in the file (``None``: nothing to save)."""
    preset: str
    sandbox: str
    base_url: str | None = None
    """The ``--base-url`` setup checked the key against, saved with it (``None``: none given, nothing to save)."""


async def check_key(base_url: str, key: str, timeout_s: float = CHECK_TIMEOUT_S) -> Balance:
    """The balance, which proves the key; raises the client's typed errors (AuthenticationError for a 401)."""
    async with DeepSeekClient(base_url=base_url, api_key=key) as client:
        return await client.balance(timeout_s)


def _yes(answer: str, default: bool) -> bool:
    answer = answer.strip().lower()
    return default if not answer else answer in ("y", "yes")


def _choose(ask: Ask, say: Callable[[str], None], question: str, choices: tuple[str, ...], current: str) -> str:
    while True:
        answer = ask(f"{question} — {', '.join(choices)} [{current}]: ").strip() or current
        if answer in choices:
            return answer
        say(f"  {answer!r} is not one of {', '.join(choices)}")


def _ask_key(resolved: ResolvedConfig, ask: Ask, secret: Ask, say: Callable[[str], None]) -> tuple[str | None, bool]:
    """(the key, whether it is new: pasted here, not found in the environment or the file)."""
    config, var = resolved.config, resolved.config.api_key_env
    if resolved.api_key is not None:
        where = resolved.sources.get("api_key", f"${var}")
        say(f"a key is set ({where}); checking it against {config.base_url} …")
        try:
            balance = trio.run(check_key, config.base_url, resolved.api_key)
        except AuthenticationError:
            say(f"  ✗ the API refused the key in {where} (HTTP 401); paste a valid one below")
        except DeepSeekError as exc:
            say(f"  – could not check it: {exc.message}")
            return resolved.api_key, False
        else:
            say(f"  ✓ the API accepted it; balance {balance.render()}")
            return resolved.api_key, False
    while True:
        key = secret(
            "Paste your DeepSeek API key (from https://platform.deepseek.com/api_keys; it is not shown; "
            "Enter alone to skip): "
        ).strip()
        if not key:
            say(f"  no key: set ${var} in the environment before you start, or run reasonix setup again")
            return None, False
        say(f"  checking the key against {config.base_url} …")
        try:
            balance = trio.run(check_key, config.base_url, key)
        except AuthenticationError as exc:
            said = f" ({exc.server_message})" if exc.server_message else ""
            say(f"  ✗ the API refused this key (HTTP 401){said}; check that it was copied whole and paste it again")
            continue
        except DeepSeekError as exc:
            say(f"  – could not check the key: {exc.message}")
            if not _yes(ask("  Keep this key anyway? [y/N] "), default=False):
                continue
            return key, True
        say(f"  ✓ the API accepted the key; balance {balance.render()}")
        return key, True


def collect(resolved: ResolvedConfig, path: Path, ask: Ask, secret: Ask, say: Callable[[str], None]) -> Answers:
    """Ask the questions (raises EOFError when the user ends the input: nothing is written then)."""
    key, new = _ask_key(resolved, ask, secret, say)
    keep: str | None = None
    if key is not None and new:
        var = resolved.config.api_key_env
        if _yes(ask(f"Save the key in {path} (readable by you only)? [Y/n] "), default=True):
            keep = key
        else:
            say(f"  left to the environment: add  export {var}=<your key>  to your shell profile")
    preset = _choose(
        ask,
        say,
        "Default preset for goals (flash: never pro; auto: pro when needed)",
        PRESETS,
        resolved.config.goal.preset,
    )
    missing = sandbox_unavailable_reason()
    if missing is not None:
        say(
            f"  no sandbox on this machine: {missing}. Until then workspace-write and read-only cannot confine "
            "commands: every command asks first, and a goal's verify commands run only once you approve them"
        )
    sandbox = _choose(ask, say, "Sandbox for commands", SANDBOXES, resolved.config.sandbox.mode)
    return Answers(key=keep, preset=preset, sandbox=sandbox)


def save(path: Path, answers: Answers) -> None:
    """Write the answers into the user file, keeping what else it holds; the file is mode 0600 from its first byte."""
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    if answers.key is not None and KEY_FIELD in doc:
        doc.remove(KEY_FIELD)
    for table, field, value in (("goal", "preset", answers.preset), ("sandbox", "mode", answers.sandbox)):
        section = doc.get(table)
        if section is None:
            section = tomlkit.table()
            doc[table] = section
        section[field] = value
    if answers.base_url is not None:
        doc.pop("base_url", None)
    text = tomlkit.dumps(doc)
    if answers.base_url is not None:  # top-level too, above every table
        text = f"base_url = {tomlkit.item(answers.base_url).as_string()}\n" + text
    if answers.key is not None:  # first, above every table: a key after a table header would belong to that table
        text = f"{KEY_FIELD} = {tomlkit.item(answers.key).as_string()}\n" + text
    write_private(path, text)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, the file mode 0600 from its first byte (a temporary file renamed over it)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)


def run_wizard(
    workspace: Path, base_url: str | None, env: Mapping[str, str], ask: Ask, secret: Ask, say: Callable[[str], None]
) -> int:
    """The whole wizard; 0 when the answers were saved, 1 when the user ended it first."""
    resolved = load_config(workspace=workspace, flags={"base_url": base_url}, env=env)
    path = user_config_path(env)
    say(f"Reasonix setup: your DeepSeek key, the default preset and the sandbox, saved in {path}")
    try:
        answers = collect(resolved, path, ask, secret, say)
    except EOFError:
        say("\nsetup ended: nothing was written")
        return 1
    answers.base_url = base_url  # the key was checked against it: it is where the key is for
    save(path, answers)
    saved = "the key, " if answers.key is not None else ""
    saved += f"base_url {base_url}, " if base_url is not None else ""
    say(f"✓ saved {saved}preset {answers.preset} and sandbox {answers.sandbox} in {path} (mode 0600)")
    say("next: reasonix doctor checks everything; reasonix starts a conversation")
    return 0


def needs_key(resolved: ResolvedConfig) -> bool:
    """No key, and the real API (a local endpoint gets a placeholder), and the executor on DeepSeek (not on one of
    the user's ``[[providers]]``)."""
    from orchestrator.config.endpoints import role_endpoint
    from orchestrator.config.providers import ProviderChoiceError

    try:
        on_deepseek = role_endpoint(resolved.config, "executor").built_in
    except ProviderChoiceError:
        on_deepseek = False  # the command says what is wrong with [roles] when it builds its client
    return resolved.api_key is None and resolved.config.base_url == DEFAULT_BASE_URL and on_deepseek


def offer_setup(workspace: Path, base_url: str | None, env: Mapping[str, str]) -> None:
    """In a terminal with no key for the real API: offer the wizard before the command fails for want of a key."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    resolved = load_config(workspace=workspace, flags={"base_url": base_url}, env=env)
    if not needs_key(resolved):
        return
    try:
        answer = input(f"No DeepSeek API key is set (${resolved.config.api_key_env}). Run reasonix setup now? [Y/n] ")
    except EOFError:
        return
    if _yes(answer, default=True):
        import getpass

        run_wizard(workspace, base_url, env, input, getpass.getpass, print)
