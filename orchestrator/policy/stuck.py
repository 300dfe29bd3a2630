"""The no-progress detector (DESIGN §5): it stops loops before they burn the budget.

A goal is stuck when

* the same failure happens three times: same step, and the same failure text once the noise that differs between runs
  is normalized away (numbers such as durations, line numbers, pids and timestamps; addresses; hashes; temp names;
  colour codes; spacing), or
* several rounds in a row (three by default) bring no new evidence: no file content not seen before, no command result
  not seen before.

Evidence is a set of opaque strings; ``workspace_fingerprint`` and ``output_evidence`` make them.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from orchestrator.text.wording import shorten
from sessions.tools import ToolError
from sessions.tools.gateway import GatewayRoot

#: Longer texts keep this many characters of their head and of their tail before normalizing.
_KEEP = 4000
_CUT = " … "

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]"), ""),  # colour and cursor codes
    (re.compile(r"[\x00-\x08\x0b-\x1f\x7f]"), ""),  # other control characters (tab and newline stay, as spacing)
    (re.compile(r"0[xX][0-9a-fA-F]+"), "0x#"),  # addresses
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b"), "#"),  # hashes, uuid parts, object ids
    (re.compile(r"\btmp[a-z0-9_]{8}\b"), "tmp#"),  # tempfile names
    (re.compile(r"\d+"), "#"),  # durations, line numbers, pids, counts, dates
    (re.compile(r"#(?:[.,:/-]#)+"), "#"),  # 1.25, 12:03:55, 2026-11-05
    (re.compile(r"\s+"), " "),  # spacing and line breaks
)


def _normalize_once(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


def normalize_failure(text: str) -> str:
    """The failure text with run-to-run noise removed, so the same failure is recognised across runs. Idempotent."""
    # Cut only what is longer than a cut text, and no rule lengthens a text: so a normalized text is never cut again.
    if len(text) > 2 * _KEEP + len(_CUT):
        text = f"{text[:_KEEP]}{_CUT}{text[-_KEEP:]}"
    # One pass can join characters into a new match (a colour code between two halves of a number); repeat to the
    # fixed point. Each changing pass shortens the text or turns letters or digits into '#', so this ends.
    while True:
        again = _normalize_once(text)
        if again == text:
            return text
        text = again


def failure_signature(step_id: str, text: str) -> str:
    """What "the same failure" means: the step and the normalized failure text."""
    return hashlib.sha256(f"{step_id}\0{normalize_failure(text)}".encode()).hexdigest()


_ERROR_LINE = re.compile(r"\w(Error|Exception)\b|\b(error|failed|FAILED|fatal)\b")


def _headline(text: str, limit: int = 120) -> str:
    """The line that best says what failed: the first naming an error, else the first non-blank one; cleaned."""
    lines = []
    for raw in text.splitlines():
        line = _RULES[1][0].sub("", _RULES[0][0].sub("", raw))
        line = " ".join(line.split())
        if line:
            lines.append(line)
    if not lines:
        return "(no output)"
    line = next((candidate for candidate in lines if _ERROR_LINE.search(candidate)), lines[0])
    return shorten(line, limit)


_TIMES = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}


def _times(n: int) -> str:
    return _TIMES.get(n, f"{n} times")


class StuckVerdict(BaseModel):
    """Why the goal pauses as stuck; ``reason`` is shown to the user as is."""

    model_config = ConfigDict(frozen=True)
    reason: str
    step_id: str | None = None


class ProgressTracker:
    """Counts repeated failures and rounds without new evidence; see the module docstring."""

    def __init__(self, *, same_failure_limit: int = 3, idle_round_limit: int = 3) -> None:
        if same_failure_limit < 1 or idle_round_limit < 1:
            raise ValueError("the stuck limits must be at least 1")
        self.same_failure_limit = same_failure_limit
        self.idle_round_limit = idle_round_limit
        self._failures: Counter[str] = Counter()
        self._seen: set[str] = set()
        self._idle_rounds = 0

    @property
    def idle_rounds(self) -> int:
        return self._idle_rounds

    def record_failure(self, step_id: str, text: str, shown: str | None = None) -> StuckVerdict | None:
        """A step failed (verification output or error text); a verdict when this failure reached the limit.
        ``shown`` is what the verdict tells the user about it (default: the line of ``text`` naming the error)."""
        signature = failure_signature(step_id, text)
        self._failures[signature] += 1
        if self._failures[signature] < self.same_failure_limit:
            return None
        what = shown if shown is not None else _headline(text)
        reason = f"the same failure {_times(self.same_failure_limit)} on {step_id}: {what}"
        return StuckVerdict(reason=reason, step_id=step_id)

    def record_round(self, evidence: Iterable[str]) -> StuckVerdict | None:
        """One executor round ended with this evidence; a verdict when too many rounds in a row added nothing new."""
        new = set(evidence) - self._seen
        if new:
            self._seen |= new
            self._idle_rounds = 0
            return None
        self._idle_rounds += 1
        if self._idle_rounds < self.idle_round_limit:
            return None
        rounds = self._idle_rounds
        return StuckVerdict(reason=f"{rounds} rounds without new evidence (no new file content, no new command result)")

    def reset(self) -> None:
        """Forget the counts (a stuck goal the user resumes gets a fresh chance); evidence already seen stays seen."""
        self._failures.clear()
        self._idle_rounds = 0


def output_evidence(command: str, output: str) -> str:
    """Evidence of one command result; outputs that differ only by noise (timings, addresses) are the same evidence."""
    digest = hashlib.sha256(f"{command}\0{normalize_failure(output)}".encode()).hexdigest()
    return f"output:{digest}"


def _has_magic(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def _file_entry(root: GatewayRoot, rel: str, name: str) -> str:
    """Evidence of one file's content, read through the gateway (a FIFO, a device or a link out is never read)."""
    try:
        handle, _ = root.open_file(rel)
    except ToolError as exc:
        if exc.message.startswith("not found"):
            return f"file:{name}:absent"
        if "is a directory" in exc.message:
            return f"file:{name}:directory"
        return f"file:{name}:unreadable"
    with handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    return f"file:{name}:{digest}"


def workspace_fingerprint(root: Path, paths: Iterable[str]) -> set[str]:
    """Evidence of file contents: one entry per file (path and content hash), ``absent`` for a missing one.

    Relative globs (``src/*.py``) expand to the files they match, in the workspace; a glob matching nothing is absent.
    """
    entries: set[str] = set()
    gateway = GatewayRoot(root)
    for raw in paths:
        if _has_magic(raw) and not Path(raw).is_absolute():
            matches = sorted(p for p in root.glob(raw) if p.is_file())
            if not matches:
                entries.add(f"file:{raw}:absent")
            for match in matches:
                rel = match.relative_to(root).as_posix()
                entries.add(_file_entry(gateway, rel, rel))
            continue
        path = root / raw
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            name = raw
        entries.add(_file_entry(gateway, raw, name))
    return entries
