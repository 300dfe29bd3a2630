"""``reasonix completion bash|zsh|tcsh``: print a shell completion script for every command and option.

Install it once, for example::

    reasonix completion bash > ~/.local/share/bash-completion/completions/reasonix
    reasonix completion zsh > ~/.zfunc/_reasonix    # with fpath+=~/.zfunc before compinit in ~/.zshrc

The script is generated from the same parser as ``--help`` by ``shtab``, an optional dependency:
``pip install 'reasonix[completion]'``. Without it the command says so and exits 2.
"""

from __future__ import annotations

import argparse
import sys

SHELLS = ("bash", "zsh", "tcsh")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def run(args: argparse.Namespace) -> int:
    try:
        import shtab
    except ModuleNotFoundError:
        print(
            "reasonix completion: shell completion needs the optional package shtab: "
            "pip install 'reasonix[completion]' (or pip install shtab)",
            file=sys.stderr,
        )
        return 2
    from orchestrator.cli.main import build_parser

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0
