"""``reasonix serve``: the orchestration service on loopback. An HTTP API that starts goals in workspaces, lists their
runs, streams their events (SSE), takes the plan review, pauses, resumes and undoes, and serves the dashboard page
(``docs/serve-api.md``).

It prints one line to standard output, ``reasonix serve: http://HOST:PORT/?token=TOKEN`` (open it in a browser, or send
the token as ``Authorization: Bearer TOKEN``); further lines go to standard error. Every request needs the token.
Binding to an address other than loopback needs ``--allow-remote``. Only loopback ``Host`` names (and those given with
``--allow-host``) are answered; ``--workspace-root`` confines where goals may start. Ctrl-C (or SIGTERM) pauses the
running goals, which stay resumable, and exits.

Exit status: 0 stopped by SIGTERM; 130 stopped by Ctrl-C; 2 a usage problem (a non-loopback address without
``--allow-remote``, a workspace that is not a directory, a port in use).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, loopback)")
    parser.add_argument("--port", type=int, default=8765, help="port to bind; 0 picks a free one (default: 8765)")
    parser.add_argument(
        "--workspace",
        type=Path,
        action="append",
        metavar="DIR",
        help="a workspace whose runs to list (repeatable; default: .); goals may start in any directory",
    )
    parser.add_argument("--allow-remote", action="store_true", help="allow binding to a non-loopback address (risky)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name to answer to besides loopback ones (repeatable; e.g. the name an SSH tunnel or proxy uses)",
    )
    parser.add_argument(
        "--workspace-root",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="goals may start only in directories under this one (repeatable; default: any project directory)",
    )
    parser.add_argument("--token", metavar="TOKEN", help="the access token (default: a new random one)")
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="where the service remembers its workspaces (default: $XDG_STATE_HOME/reasonix/serve)",
    )
    parser.add_argument("--base-url", metavar="URL", help="the DeepSeek API endpoint (e.g. a local `reasonix emulate`)")


def _say(text: str) -> None:
    print(f"reasonix serve: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    import os
    import secrets
    import signal

    import trio

    from orchestrator.policy.workspace_rule import WorkspaceError, check_workspace
    from orchestrator.serve.app import check_bind, create_app, serve_app
    from orchestrator.serve.errors import RemoteBindError
    from orchestrator.serve.manager import open_manager
    from orchestrator.serve.workspaces import default_state_dir
    from orchestrator.text.wording import counted

    try:
        check_bind(args.host, allow_remote=args.allow_remote)
    except RemoteBindError as exc:
        _say(f"{exc}.\n{exc.hint}")
        return 2
    try:
        workspaces = [check_workspace(p) for p in (args.workspace or [Path(".")])]
    except WorkspaceError as exc:
        _say(str(exc))
        return 2
    token: str = args.token or secrets.token_urlsafe(24)
    state_dir: Path = args.state_dir or default_state_dir(os.environ)
    stopped_by: list[int] = []

    async def main() -> None:
        stop = trio.Event()
        async with open_manager(
            state_dir=state_dir,
            workspaces=workspaces,
            env=os.environ,
            base_url=args.base_url,
            on_notice=_say,
            workspace_roots=args.workspace_root,
        ) as manager:
            hosts = [*args.allow_host, *([] if args.host in ("0.0.0.0", "::") else [args.host])]
            app = create_app(manager, token, allowed_hosts=hosts)
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for signum in signals:
                            if stopped_by:
                                os._exit(130)  # a second signal: leave at once
                            stopped_by.append(signum)
                            running = manager.pause_all()
                            _say(f"stopping: pausing {counted(len(running), 'running goal')}; they stay resumable")
                            with trio.move_on_after(30):
                                await manager.wait_idle()
                            stop.set()

                nursery.start_soon(watch)
                try:
                    url = await nursery.start(serve_app, app, args.host, args.port, stop.wait)
                except OSError as exc:
                    _say(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; try --port 0")
                    stopped_by.append(-1)
                    nursery.cancel_scope.cancel()
                    return
                print(f"reasonix serve: {url}/?token={token}", flush=True)
                _say(f"serving {counted(len(workspaces), 'workspace')}; Ctrl-C pauses the running goals and stops")
                await stop.wait()
                nursery.cancel_scope.cancel()

    trio.run(main)
    if stopped_by == [-1]:
        return 2
    return 0 if stopped_by and stopped_by[0] == signal.SIGTERM else 130
