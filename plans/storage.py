"""Plans on disk: JSON, one file per revision in a run's directory (``plan.r001.json``, ``plan.r002.json``, ...).

Writes are atomic (a temporary file in the same directory, fsynced, then ``os.replace``), so a reader never sees half
a plan. A revision file is history: saving a *different* plan under an existing revision number is refused.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from .errors import PlanFileError, PlanStorageError
from .loader import load_plan_file, parse_plan_text
from .schema import Plan

_NAME = re.compile(r"^plan\.r(\d{3,})\.json$")


def revision_path(run_dir: Path, revision: int) -> Path:
    return run_dir / f"plan.r{revision:03d}.json"


def dump_plan(plan: Plan) -> str:
    """The file form of a plan: indented JSON in field order, ending with a newline."""
    return plan.model_dump_json(indent=2) + "\n"


def parse_plan(text: str | bytes, *, source: str = "plan") -> Plan:
    """A plan from its JSON (strictly: use :mod:`plans.lenient` for model-made plans); :class:`PlanFileError` if not."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanFileError.invalid(source, f"it is not UTF-8 text (byte {exc.start})") from None
    return parse_plan_text(text, source).plan


def write_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` through a temporary sibling file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_plan(path: Path, plan: Plan) -> Path:
    """Write one plan to ``path`` atomically (overwriting whatever is there)."""
    write_atomic(path, dump_plan(plan))
    return path


def load_plan(path: Path) -> Plan:
    """The plan stored in ``path`` (strictly); :class:`PlanFileError` names the file and every problem."""
    return load_plan_file(path).plan


def save_revision(run_dir: Path, plan: Plan) -> Path:
    """Store ``plan`` as ``plan.r<revision>.json`` in ``run_dir``. Saving the same plan again is a no-op."""
    path = revision_path(run_dir, plan.revision)
    if path.exists():
        if load_plan(path) == plan:
            return path
        raise PlanStorageError(
            f"{path} already holds a different plan for revision {plan.revision}; "
            f"revisions are history: save the new plan as revision {latest_revision_number(run_dir) + 1}"
        )
    return save_plan(path, plan)


def revision_numbers(run_dir: Path) -> list[int]:
    """The revisions stored in ``run_dir``, ascending (empty if none or no such directory)."""
    if not run_dir.is_dir():
        return []
    numbers = (_NAME.match(entry.name) for entry in run_dir.iterdir())
    return sorted(int(m.group(1)) for m in numbers if m)


def latest_revision_number(run_dir: Path) -> int:
    numbers = revision_numbers(run_dir)
    return numbers[-1] if numbers else 0


def load_revision(run_dir: Path, revision: int) -> Plan:
    return load_plan(revision_path(run_dir, revision))


def load_latest(run_dir: Path) -> Plan | None:
    """The newest stored revision, or ``None`` when the run has no plan yet."""
    number = latest_revision_number(run_dir)
    return load_revision(run_dir, number) if number else None
