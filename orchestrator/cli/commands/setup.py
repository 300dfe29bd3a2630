"""``reasonix setup``: the first-run wizard (:mod:`orchestrator.cli.setup_wizard`): the API key pasted once without
echo and checked against the API, saved in the user config file (mode 0600) or left to the environment; the default
preset and sandbox; the balance. ``reasonix code`` and ``reasonix chat`` offer it when they start in a terminal with no
key.

Exit status: 0 when the answers were saved, 1 when the wizard was ended first (Ctrl-D), 2 without a terminal.
"""

from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import add_base_url_option, add_workspace_option

    add_workspace_option(parser)
    add_base_url_option(parser)


def run(args: argparse.Namespace) -> int:
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
