"""What an undo shows and asks in a terminal (``reasonix undo``, and ``/undo`` and ``/rewind`` in the conversation):
the files it takes back, the diff of those changed since the agent, and the keep / overwrite / cancel question."""

from __future__ import annotations

from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.undo import UndoPlan
from orchestrator.text.wording import counted

MAX_DIFF_LINES = 40
BINARY_PROBE_BYTES = 8000  # as git's own binary check
ACTIONS = {"A": "remove (the step created it)", "D": "bring back (the step deleted it)"}


def describe(plan: UndoPlan) -> list[str]:
    steps = ", ".join(dict.fromkeys(sr.before.step_id for sr in plan.steps))

    lines = [f"taking back {steps} of run {plan.run_id}: {counted(len(plan.restore), 'file')}"]
    if plan.cut_off:
        lines.append("  (the step was cut off before it ended: every change since its checkpoint needs your word)")
    for c in plan.restore:
        conflict = c.path in plan.conflicts
        note = " — changed again since the agent" if conflict and not plan.cut_off else ""
        lines.append(f"{'  ! ' if conflict else '    '}{c.path}: {ACTIONS.get(c.status, 'restore')}{note}")
    return lines


async def _is_text(repo: ShadowRepo, tree: str, path: str) -> bool:
    """Whether ``path`` in ``tree`` looks like text as git would judge it (no NUL in its first 8000 bytes); a path
    the tree does not hold is an empty side, so text."""
    blob = await repo.git("cat-file", "-p", f"{tree}:{path}", ok_codes=(0, 128))
    return b"\0" not in blob[:BINARY_PROBE_BYTES]


async def conflict_stat(repo: ShadowRepo, plan: UndoPlan) -> str:
    """The diff of the conflicting files from what the agent left to now. The shadow store unsets the ``diff``
    attribute for every path (a repository names no diff driver), which makes git call every file binary; each file
    that is text on both sides is diffed with ``--text``, so a one-line edit shows as one."""
    chunks: list[bytes] = []
    for path in plan.conflicts:
        text = await _is_text(repo, plan.agent_tree, path) and await _is_text(repo, plan.now.tree, path)
        flags = ("--text",) if text else ()
        chunks.append(await repo.git("diff", *flags, plan.agent_tree, plan.now.tree, "--", f":(literal){path}"))
    lines = b"".join(chunks).decode("utf-8", "replace").rstrip().splitlines()
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(lines)


def ask_about_conflicts(plan: UndoPlan, stat: str) -> bool | None:
    """True: overwrite; False: keep them; None: cancel."""
    print(f"\nchanged after the agent (by hand, or by a later run): {', '.join(plan.conflicts)}")
    print("what changed since the agent left it:\n" + stat)
    while True:
        try:
            answer = input(
                "[k]eep your versions and undo the rest, [o]verwrite them (kept in a checkpoint), [c]ancel? "
            )
        except EOFError:
            return None
        choice = answer.strip().lower()[:1]
        if choice in ("k", "o", "c"):
            return {"k": False, "o": True, "c": None}[choice]
