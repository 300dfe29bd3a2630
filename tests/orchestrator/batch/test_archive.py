"""A tar is unpacked safely with and without tarfile's ``data`` filter (Debian 12's Python 3.11.2 has none)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from orchestrator.batch.archive import UnsafeArchiveError, extract_tar


def _tar(members: list[tuple[str, bytes | None, str | None]]) -> bytes:
    """(name, file bytes or None, symlink target or None): a folder when both are None."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o4755
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(params=["data filter", "without the data filter"])
def python(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param != "data filter":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return str(request.param)


def test_a_plain_archive_is_unpacked_without_set_uid_bits(python: str, tmp_path: Path) -> None:
    raw = _tar([("pkg", None, None), ("pkg/a.py", b"x = 1\n", None), ("pkg/link", None, "a.py")])
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        extract_tar(tar, tmp_path / "out")
    assert (tmp_path / "out/pkg/a.py").read_bytes() == b"x = 1\n"
    assert (tmp_path / "out/pkg/link").read_bytes() == b"x = 1\n"
    assert not (tmp_path / "out/pkg/a.py").stat().st_mode & 0o6000


@pytest.mark.parametrize(
    "members",
    [
        [("../escape.txt", b"no", None)],
        [("/tmp/absolute.txt", b"no", None)],
        [("link", None, "/etc/passwd")],
        [("link", None, "../../outside")],
    ],
    ids=["dot-dot", "absolute name", "absolute link", "link out"],
)
def test_a_member_that_would_leave_the_destination_is_refused_before_anything_is_written(
    python: str, tmp_path: Path, members: list[tuple[str, bytes | None, str | None]]
) -> None:
    dest = tmp_path / "a" / "out"
    dest.mkdir(parents=True)
    raw = _tar([("first.txt", b"written?", None), *members])
    refused = False
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        try:
            extract_tar(tar, dest)
        except tarfile.TarError:
            refused = True
    assert not (tmp_path / "a" / "escape.txt").exists() and not (tmp_path / "outside").exists()
    assert not any(p.is_symlink() and not p.resolve().is_relative_to(dest.resolve()) for p in dest.rglob("*"))
    if python != "data filter":  # checked whole before the first write (the data filter strips a leading "/")
        assert refused and not (dest / "first.txt").exists()
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar, pytest.raises(UnsafeArchiveError):
            extract_tar(tar, dest)
