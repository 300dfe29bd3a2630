"""``reasonix setup``: the first-run wizard (:mod:`orchestrator.cli.setup_wizard`): the API key pasted once without
echo and checked against the API, saved in the user config file (mode 0600) or left to the environment; the default
preset and sandbox; the balance. ``reasonix code`` and ``reasonix chat`` offer it when they start in a terminal with no
key.

``--add-provider NAME`` adds an OpenAI-compatible ``[[providers]]`` entry instead
(:mod:`orchestrator.cli.setup_provider`): from its flags alone without a terminal, asking what they leave out in one.

Exit status: 0 when the answers were saved, 1 when the wizard was ended first (Ctrl-D), 2 without a terminal (or,
adding a provider, with a flag missing or wrong).
"""

from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli import setup_provider
    from orchestrator.cli.options import add_base_url_option, add_workspace_option

    add_workspace_option(parser)
    add_base_url_option(parser)
    setup_provider.configure(parser)


def run(args: argparse.Namespace) -> int:
    if args.add_provider is not None:
        import os

        from orchestrator.cli.setup_provider import add_provider

        terminal = sys.stdin.isatty()
        return add_provider(
            args,
            os.environ,
            input if terminal else None,
            lambda text: print(text, flush=True),
            confirm=input if terminal else None,
        )
    provider_flags = ("provider_url", "provider_model", "provider_key_env", "prices", "context_window", "max_output")
    if any(getattr(args, f) is not None for f in provider_flags) or args.free or args.use_for:
        print("reasonix setup: the provider flags go with --add-provider NAME", file=sys.stderr)
        return 2
    if not sys.stdin.isatty():
        print(
            "reasonix setup: the wizard asks questions and needs a terminal; without one, set DEEPSEEK_API_KEY in "
            "the environment, or write api_key into ~/.config/reasonix/config.toml (mode 0600)",
            file=sys.stderr,
        )
        return 2
    import getpass
    import os

    from orchestrator.cli.setup_wizard import run_wizard
    from orchestrator.policy.workspace_rule import check_workspace

    workspace = check_workspace(args.workspace)
    return run_wizard(
        workspace, args.base_url, os.environ, input, getpass.getpass, lambda text: print(text, flush=True)
    )
