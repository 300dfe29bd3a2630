"""The command-line options that ``run``, ``goal``, ``plan``, ``exec`` and ``doctor`` share, defined once.

The task or objective can be given three ways, the same for ``run`` (``task``) and ``goal`` / ``plan``
(``objective``):

* as the argument: ``reasonix goal "add a --json flag"``;
* from standard input, with ``-`` as the argument: ``cat objective.md | reasonix goal - --yes``;
* from a file: ``reasonix goal --objective-file objective.md`` (``reasonix run --task-file task.md``); the file may be
  ``-`` for standard input too.

A long text then never meets the operating system's limit on argument length. The text is read as UTF-8, at most
:data:`MAX_TEXT_BYTES`. (Reading standard input means the plan review cannot ask there: add ``--yes``.)

Standard library only: ``reasonix --help`` is fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MAX_TEXT_BYTES = 1_000_000
"""The largest task or objective read from a file or standard input (1 MB; a model's context is smaller anyway)."""


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )


def add_base_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", metavar="URL", help="DeepSeek API base URL, e.g. a `reasonix emulate` server")


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print events as JSON lines, then a summary object")


def add_max_requests_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--max-requests", type=int, metavar="N", help=help_text)


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """What ``goal``, ``plan`` and ``exec`` take: where, which server, escalation preset, limits, output."""
    add_workspace_option(parser)
    add_base_url_option(parser)
    add_command_options(parser)
    parser.add_argument(
        "--preset",
        choices=("flash", "auto", "pro"),
        help="flash: never escalate; auto (default): escalate single turns to pro when needed; pro: always pro",
    )
    parser.add_argument("--budget-usd", type=float, metavar="X", help="pause the goal when it has cost $X")
    add_max_requests_option(parser, "pause the goal after N requests to the model")
    parser.add_argument("--max-minutes", type=float, metavar="M", help="pause the goal after M minutes of work")
    parser.add_argument(
        "--allow-unconfined-verify",
        action="store_true",
        help="without a sandbox, still run the plan's verify commands, on this machine with your rights "
        "(--yes does not approve that)",
    )
    add_json_option(parser)


def add_command_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "full-access"),
        help="what confines the processes of a command (bubblewrap): workspace-write (default, or [sandbox] mode), "
        "read-only (a command cannot write the workspace either; the file tools are --permissions' business), "
        "full-access (no sandbox)",
    )
    parser.add_argument(
        "--permissions",
        choices=("ask", "auto", "read-only"),
        help="what runs without asking: ask (every command and write no rule allows asks first), auto (they run, "
        "commands sandboxed), read-only (the session refuses every change: the same as `code --mode plan` and "
        "`run --read-only`)",
    )


def add_record_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="write a replayable scenario of this run (workspace at the start, every request and reply; never the key)",
    )


def add_review_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="approve the plan without asking (no review)")


def add_text_argument(parser: argparse.ArgumentParser, name: str, help_text: str) -> None:
    """The positional ``name`` (``-`` reads standard input) and ``--<name>-file FILE`` (``-`` for standard input)."""
    parser.add_argument(name, nargs="?", help=f"{help_text}; - reads it from standard input")
    parser.add_argument(
        f"--{name}-file", type=Path, metavar="FILE", help=f"read the {name} from FILE (UTF-8; - for standard input)"
    )


def read_text_argument(args: argparse.Namespace, name: str) -> str | None:
    """The task or objective as given: the argument, standard input, or a file. ``None`` when none was given.

    Raises :class:`orchestrator.errors.UsageError` for both at once, an unreadable file, non-UTF-8 text or a text over
    :data:`MAX_TEXT_BYTES`.
    """
    from orchestrator.errors import UsageError

    given: str | None = getattr(args, name, None)
    path: Path | None = getattr(args, f"{name}_file", None)
    if given is not None and path is not None:
        raise UsageError(f"give the {name} as an argument or with --{name}-file, not both")
    if path is None and given != "-":
        return given
    where = "standard input" if path is None or str(path) == "-" else str(path)
    try:
        if where == "standard input":
            data = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1) if sys.stdin is not None else b""
        else:
            assert path is not None
            with path.open("rb") as handle:
                data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read the {name} from {where}: {exc.strerror or exc}") from None
    if len(data) > MAX_TEXT_BYTES:
        raise UsageError(f"the {name} in {where} is over {MAX_TEXT_BYTES:,} bytes; shorten it or point to files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the {name} in {where} is not UTF-8 text (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); "
            "save it as UTF-8"
        ) from None


def _duration(text: str) -> float:
    from orchestrator.config.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_unattended_options(parser: argparse.ArgumentParser) -> None:
    """What ``goal`` and ``exec`` take to run with nobody at the terminal."""
    parser.add_argument(
        "--unattended",
        action="store_true",
        default=None,
        help="never ask anything (the plan is approved as --yes does); wait out DeepSeek outages with a growing "
        "backoff; end blocked where a person would be needed; write summary.md in the run directory",
    )
    parser.add_argument(
        "--max-runtime",
        type=_duration,
        metavar="DURATION",
        help="with --unattended: stop (resumable) after this much wall time, waits included: 90m, 8h, 1.5d",
    )
    parser.add_argument(
        "--notify-cmd",
        metavar="CMD",
        help="with --unattended: run CMD (through sh) when the goal ends; REASONIX_RUN_ID, REASONIX_STATUS, "
        "REASONIX_REASON and REASONIX_SUMMARY (the summary file) are in its environment",
    )
