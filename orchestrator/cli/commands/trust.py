"""``reasonix trust``: accept a workspace's own configuration (``reasonix.toml``, ``reasonix.local.toml``) as it is now.

Until then, the keys that redirect requests, pick the API key, open the network, drop the sandbox or allow commands
are refused in those files. The hashes go to ``trusted.json`` in the user's configuration directory; a changed file
must be trusted again.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", type=Path, default=Path("."), metavar="DIR", help="project directory (default: .)"
    )


def run(args: argparse.Namespace) -> int:
    import os

    from orchestrator.config.field_trust import restricted_keys
    from orchestrator.config.files import read_toml
    from orchestrator.config.mcp import MCP_FILE, read_mcp_json
    from orchestrator.config.model import LOCAL_FILE, PROJECT_FILE, Config, user_config_path
    from orchestrator.config.trust import file_hash, guarded_keys, record_hash, trust_path
    from orchestrator.errors import ReasonixError

    workspace = args.workspace.expanduser().resolve()
    if not workspace.is_dir():
        print(f"reasonix trust: {args.workspace} is not a directory; pass --workspace DIR")
        return 2
    files = [p for p in (workspace / PROJECT_FILE, workspace / LOCAL_FILE, workspace / MCP_FILE) if p.exists()]
    if not files:
        print(f"reasonix trust: {workspace} has no {PROJECT_FILE} or {LOCAL_FILE}; there is nothing to trust")
        return 0
    hashes: dict[Path, str] = {}
    try:
        for path in files:
            hashes[path] = file_hash(path)  # trusted as shown below: a change after this is not
            data = (read_mcp_json(path) if path.name == MCP_FILE else read_toml(path, within=workspace)) or {}
            if file_hash(path) != hashes[path]:
                print(f"reasonix trust: {path} changed while it was read; run reasonix trust again")
                return 2
            keys = guarded_keys(data)
            print(f"{path}: " + ("no keys that need trust" if not keys else "trusting:"))
            for key, why in keys:
                print(f"  {key}: {why}")
            replacing = restricted_keys(data, Config)  # the fields not declared cosmetic
            if replacing:
                print("  once trusted, these replace yours instead of only tightening: " + ", ".join(replacing))
    except ReasonixError as exc:
        print(f"reasonix trust: {exc}")
        return 2
    except OSError as exc:  # a FIFO, a symlink out of the workspace, a file too large: never trusted
        print(f"reasonix trust: cannot read {path} ({exc.strerror or exc}); fix or remove it, then run it again")
        return 2
    store = trust_path(user_config_path(os.environ))
    record_hash(store, hashes)
    print(f"recorded in {store}; if a file changes, run reasonix trust again")
    return 0
