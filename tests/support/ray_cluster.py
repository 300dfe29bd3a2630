"""A real two-node Ray cluster on this machine, loopback only (Ray's own multi-node test cluster,
``ray.cluster_utils.Cluster``): usage statistics off, no dashboard, one CPU a node, its files in a private temporary
directory. And what the tests check around it: the listening sockets of every process of the cluster."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",  # Ray reports to its makers by default
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # keep 127.0.0.1 as the node address (else Ray takes the machine's)
}


@dataclass
class TwoNodes:
    cluster: Any
    head: Any
    second: Any
    tmp: Path

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def env(self) -> dict[str, str]:
        """What a driver process needs to join this cluster and to find its address file."""
        return {**RAY_ENV, "RAY_TMPDIR": str(self.tmp)}

    def pids(self) -> set[int]:
        """Every process of the cluster (both nodes and their workers): the descendants of this process that Ray
        started."""
        out: set[int] = set()
        frontier = [os.getpid()]
        children = _children()
        while frontier:
            pid = frontier.pop()
            for child in children.get(pid, []):
                if child not in out:
                    out.add(child)
                    frontier.append(child)
        return out

    def stop_second_raylet(self) -> None:
        """Kill the second node's raylet (and so its workers), as when its machine dies."""
        self.cluster.remove_node(self.second, allow_graceful=False)


def descendants(root: int) -> set[int]:
    """Every process below ``root`` (its children, theirs …)."""
    out: set[int] = set()
    frontier, children = [root], _children()
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in out:
                out.add(child)
                frontier.append(child)
    return out


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out.setdefault(ppid, []).append(int(entry.name))
    return out


def listening_addresses(pids: set[int]) -> list[tuple[int, str]]:
    """``(pid, local address)`` of every TCP or UDP socket the processes listen on or are bound to."""
    inodes: dict[str, int] = {}
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            continue
    found: list[tuple[int, str]] = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        try:
            lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            listening = state == "0A" if table.startswith("tcp") else True
            if listening and inode in inodes:
                found.append((inodes[inode], _address(local)))
    return found


def _address(hex_address: str) -> str:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return ".".join(str(b) for b in raw[::-1]) + f":{int(port, 16)}"
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    flat = b"".join(words)
    if flat[:12] == b"\0" * 10 + b"\xff\xff":
        return ".".join(str(b) for b in flat[12:]) + f":{int(port, 16)}"
    return "[" + flat.hex() + f"]:{int(port, 16)}"


@contextmanager
def one_ray_at_a_time() -> Iterator[None]:
    """Held while a test has a Ray cluster up: two clusters of two suite workers at once on one machine (ports,
    ``auto`` discovery, two cores) made a goal wait past its bound. The lock is a file in the temporary folder,
    shared by every worker of the run; one per user (another user's lock file cannot be opened for writing there)."""
    with open(os.path.join(tempfile.gettempdir(), f"reasonix-tests-ray-{os.geteuid()}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def two_node_cluster() -> Iterator[TwoNodes]:
    """Start the head and a second node (one CPU each, loopback), and take both down afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="rx-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    saved = {k: os.environ.get(k) for k in (*RAY_ENV, "RAY_TMPDIR")}
    os.environ.update({**RAY_ENV, "RAY_TMPDIR": str(tmp)})
    from ray.cluster_utils import Cluster

    args = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, head_node_args={**args, "include_dashboard": False})
    try:
        second = cluster.add_node(**args)
        yield TwoNodes(cluster=cluster, head=cluster.head_node, second=second, tmp=tmp)
    finally:
        cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(tmp, ignore_errors=True)
