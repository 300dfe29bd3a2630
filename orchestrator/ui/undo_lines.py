"""What an undo shows and asks in a terminal (``reasonix undo``, and ``/undo`` and ``/rewind`` in the conversation):
the files it takes back, the diff of those changed since the agent, and the keep / overwrite / cancel question."""

from __future__ import annotations

from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.undo import UndoPlan
from orchestrator.text.wording import counted

MAX_DIFF_LINES = 40
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


async def conflict_stat(repo: ShadowRepo, plan: UndoPlan) -> str:
    out = await repo.git("diff", plan.agent_tree, plan.now.tree, "--", *(f":(literal){p}" for p in plan.conflicts))
    lines = out.decode("utf-8", "replace").rstrip().splitlines()
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
