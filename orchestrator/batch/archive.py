"""A tar archive unpacked safely on every Python the project supports.

``tarfile``'s ``data`` filter (refusing absolute names, ``..``, links that leave the destination, devices, and
clearing set-uid bits) exists from Python 3.11.4 on; Debian 12's ``python3`` is 3.11.2, where ``extractall`` has no
``filter`` argument at all. There each member is checked here by the same rules before anything is written.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path


class UnsafeArchiveError(tarfile.TarError):
    """A member of the archive would be written outside the destination, or is not a plain file, folder or link."""


def _check(member: tarfile.TarInfo, root: str) -> None:
    name = member.name
    target = os.path.realpath(os.path.join(root, name))
    if os.path.isabs(name) or os.path.commonpath([root, target]) != root:
        raise UnsafeArchiveError(f"the member {name!r} would be written outside the destination")
    if member.isdev() or not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise UnsafeArchiveError(f"the member {name!r} is a device or special file")
    if member.issym() or member.islnk():
        link = member.linkname
        base = os.path.dirname(target) if member.issym() else root
        pointed = os.path.realpath(os.path.join(base, link))
        if os.path.isabs(link) or os.path.commonpath([root, pointed]) != root:
            raise UnsafeArchiveError(f"the link {name!r} -> {link!r} points outside the destination")


def extract_tar(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack every member of ``tar`` into ``dest``, refusing one that would escape it (:class:`UnsafeArchiveError`,
    a :class:`tarfile.TarError`) before anything is written."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = os.path.realpath(dest)
    members = tar.getmembers()
    for member in members:
        _check(member, root)
    for member in members:
        member.mode &= 0o755 if not member.isdir() else 0o777  # no set-uid, set-gid or sticky bits
    tar.extractall(dest, members=members)  # pragma: no mutate (checked above; the data filter does this itself)
