"""``reasonix doctor``: check the configuration, the key, the server, the balance, prices, each ``[[providers]]``
entry, the tokenizer, ripgrep and MCP servers.

One line per check (✓ passed, ✗ failed, – skipped or optional), each failure followed by what to do about it.
Exit status 1 when a required check fails. ``--offline`` skips the key, the server and the account balance, so a
fresh machine with no key and no network passes. Each ``[[providers]]`` entry gets one line: its server reachable,
its key accepted, its model listed (where the server lists models, ``GET /models``), priced or not, and the roles
that use it. When no role uses DeepSeek's ``flash`` or ``pro``, DeepSeek's key, server and balance are not checked.
"""

from __future__ import annotations

import argparse
import os

SYMBOLS = {"ok": ("✓", "green"), "fail": ("✗", "red"), "skip": ("–", "dim"), "warn": ("–", "yellow")}


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import add_base_url_option, add_workspace_option

    add_workspace_option(parser)
    add_base_url_option(parser)
    parser.add_argument("--offline", action="store_true", help="skip the checks that need a key or the network")
    parser.add_argument(
        "--timeout", type=float, default=5.0, metavar="SECONDS", help="bound on the server check (default: 5)"
    )


def run(args: argparse.Namespace) -> int:
    import trio
    from rich.console import Console
    from rich.text import Text

    from orchestrator.check import Check
    from orchestrator.cli.doctor_checks import (
        check_balance,
        check_config,
        check_key,
        check_prices,
        check_providers,
        check_ripgrep,
        check_sandbox,
        check_tokenizer,
        probe_base_url,
        roles_using,
    )
    from orchestrator.config.endpoints import DEFAULT_BASE_URL as DEFAULT
    from orchestrator.config.endpoints import LOCAL_PLACEHOLDER_KEY
    from orchestrator.config.providers import BUILT_IN
    from orchestrator.mcp.doctor import check_mcp
    from orchestrator.text.wording import counted

    console = Console(highlight=False, soft_wrap=True)

    def show(check: Check) -> None:
        symbol, style = SYMBOLS[check.status]
        line = Text()
        line.append(symbol, style=style)
        line.append(f" {check.name}: ", style="bold")
        line.append(check.detail)
        console.print(line)
        for problem in check.problems:
            console.print(Text(f"    {problem}"))
        for fix in check.fix:
            console.print(Text(f"    fix: {fix}", style="yellow" if check.status == "warn" else "red"))

    checks: list[Check] = []

    def record(check: Check) -> None:
        checks.append(check)
        show(check)

    config_check, resolved = check_config(args.workspace, {"base_url": args.base_url}, os.environ)
    record(config_check)
    if resolved is None:
        for name in ("API key", "server", "balance", "prices"):
            record(Check(name, "skip", "skipped: the configuration did not load"))
    else:
        used, _ = roles_using(resolved)  # a [roles] that names no entry is said by check_providers below
        if used and not set(used) & set(BUILT_IN):
            for name in ("API key", "server", "balance"):
                record(Check(name, "skip", "not checked: no role uses DeepSeek's flash or pro"))
        elif args.offline:
            record(check_key(resolved, args.offline))
            record(Check("server", "skip", f"skipped (--offline); would GET {resolved.config.base_url}/models"))
        else:
            record(check_key(resolved, args.offline))
            key = resolved.api_key or (None if resolved.config.base_url == DEFAULT else LOCAL_PLACEHOLDER_KEY)
            server = trio.run(probe_base_url, resolved.config.base_url, key, args.timeout, resolved.sources["base_url"])
            record(server)
            if key is None or server.failed:
                record(Check("balance", "skip", "skipped: " + ("no key" if key is None else "the server check failed")))
            else:
                record(
                    trio.run(check_balance, resolved.config.base_url, key, resolved.config.api_key_env, args.timeout)
                )
        record(check_prices(resolved))
        for check in trio.run(check_providers, resolved, os.environ, args.timeout, args.offline):
            record(check)
    record(check_tokenizer())
    record(check_ripgrep())
    record(check_sandbox())
    if resolved is not None:
        for check in trio.run(check_mcp, resolved.config.mcp, args.workspace.expanduser().resolve()):
            record(check)

    failed = [c.name for c in checks if c.failed]
    if failed:
        console.print(Text(f"{counted(len(failed), 'required check')} failed: {', '.join(failed)}", style="bold red"))
        return 1
    console.print(Text("all required checks passed", style="bold green"))
    return 0
