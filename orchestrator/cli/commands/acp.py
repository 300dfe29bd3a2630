"""``reasonix acp``: an Agent Client Protocol agent on standard input and output, for an editor to start (Zed,
JetBrains, the VS Code ACP extensions). Each session works in the ``cwd`` the editor gives, with that workspace's
configuration; standard output carries only the protocol, messages go to standard error. It runs until the editor
closes standard input. See docs/scripting.md for the editor's settings.
"""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    from orchestrator.cli.options import add_base_url_option

    add_base_url_option(parser)


def run(args: argparse.Namespace) -> int:
    import os

    import trio

    from orchestrator.acp.agent import serve_stdio
    from orchestrator.exits import ExitCode

    try:
        trio.run(lambda: serve_stdio(env=os.environ, base_url=args.base_url))
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    return ExitCode.OK
