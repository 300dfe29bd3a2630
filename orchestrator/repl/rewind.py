"""``/rewind`` (and Esc Esc on an empty line) and ``/fork``: back to before an earlier turn.

The picker lists the conversation's turns (what the user asked, what the turn changed), then restores the *code*
(every file the agent changed from that turn on, as the turn found it; a file changed by hand since is asked about,
never overwritten silently), the *conversation* (the journal cut where the turn began, the session rebuilt from it:
the same bytes, so the next request hits the cache up to there), or *both*; or forks: a new conversation whose
journal is a copy up to that point, the old one kept (``reasonix code --resume`` lists both).

``/rewind N [both|code|conversation|fork]`` and ``/fork [N]`` skip the questions.
"""

from __future__ import annotations

import sys

import trio

from orchestrator.build import run_dir
from orchestrator.conversation.engine import conversation_journal
from orchestrator.conversation.turn_log import TurnLog, TurnRecord, copy_journal, cut_journal
from orchestrator.goal.store import new_run_id, run_state_dir
from orchestrator.repl.conversation import Conversation
from orchestrator.text.wording import shorten
from orchestrator.ui.approval import read_key, read_line

CHOICES = {"b": "both", "c": "code", "t": "conversation", "f": "fork", "n": "cancel"}
WORDS = {"both": "b", "code": "c", "conversation": "t", "conv": "t", "fork": "f"}


def _line(record: TurnRecord) -> str:
    files = ", ".join(record.files) if record.files else "no file changed"
    return f"  {record.number:>3}. {shorten(record.text, 60):<60}  · {files}"


async def _ask(prompt: str) -> str:
    print(prompt, end="", flush=True)
    if not sys.stdin.isatty():
        return ""
    return await read_line(sys.stdin.fileno())


async def _ask_key(prompt: str) -> str:
    print(prompt, end="", flush=True)
    if not sys.stdin.isatty():
        return "n"
    key = (await read_key(sys.stdin.fileno()))[:1].lower()
    print(key if key.isprintable() else "")
    return key


async def pick_turn(conv: Conversation, records: list[TurnRecord], typed: str) -> TurnRecord | None:
    if not typed:
        conv.say("the turns of this conversation (rewinding to a turn goes back to just before it):", "")
        for record in records:
            conv.console.print(_line(record), soft_wrap=True, highlight=False, markup=False)
        typed = (await _ask(f"rewind to before which turn? [1-{len(records)}, Enter: cancel] ")).strip()
    if not typed:
        conv.say("nothing was changed")
        return None
    if not typed.isdigit() or not 1 <= int(typed) <= len(records):
        conv.say(f"there is no turn {typed}: this conversation has turns 1 to {len(records)}", "yellow")
        return None
    return records[int(typed) - 1]


async def restore_code(conv: Conversation, records: list[TurnRecord]) -> bool:
    """Files back as before the first of ``records``; False when the user cancelled (nothing changed then)."""
    from orchestrator.checkpoints.git import CheckpointError
    from orchestrator.checkpoints.turns import apply_rewind, plan_rewind
    from orchestrator.checkpoints.undo import NothingToUndoError
    from orchestrator.ui.undo_lines import ask_about_conflicts, conflict_stat, describe

    refs = [r.ref for r in records if r.ref is not None]
    repo = conv.checkpoints.repo
    try:
        plan = await plan_rewind(repo, refs)
    except NothingToUndoError as exc:
        conv.say(f"code: {exc}")
        return True
    except CheckpointError as exc:
        conv.say(f"code: could not plan the rewind: {exc}", "red")
        return False
    conv.renderer.end_line()
    print("\n".join(describe(plan)))
    overwrite = False
    if plan.conflicts:
        stat = await conflict_stat(repo, plan)
        decided = await trio.to_thread.run_sync(ask_about_conflicts, plan, stat)
        if decided is None:
            conv.say("cancelled; nothing was changed")
            return False
        overwrite = decided
    if not plan.restore:
        conv.say("code: the files are already as they were before that turn")
        return True
    after = await apply_rewind(repo, plan, overwrite=overwrite)
    kept = [p for p in plan.conflicts if not overwrite]
    note = f"; kept your versions of {', '.join(kept)}" if kept else ""
    conv.say(f"code restored{note} (take it back with: reasonix undo --run {after.run_id})", "green")
    return True


def rewind_conversation(conv: Conversation, record: TurnRecord) -> None:
    """The conversation as it was before ``record``: its journal cut there, the session rebuilt from it."""
    records = conv.turn_log.read()
    if conv.session.journal is not None:
        conv.session.journal.close()
    cut_journal(conv.journal_path, record.offset)
    conv.turn_log.write([r for r in records if r.number < record.number])
    conv.reopen(keep_totals=True)
    conv.sent_mode = record.sent_mode  # type: ignore[assignment]
    conv.say(f"conversation rewound to before turn {record.number}: {shorten(record.text, 60)}", "green")


def fork(conv: Conversation, record: TurnRecord | None) -> None:
    """A new conversation with the turns before ``record`` (all of them when None); the old one is kept."""
    records = conv.turn_log.read()
    old_id, old_journal = conv.run_id, conv.journal_path
    if conv.session.journal is not None:
        conv.session.journal.sync_now()
    offset = record.offset if record is not None else old_journal.stat().st_size
    kept = [r for r in records if record is None or r.number < record.number]
    new_id = new_run_id()
    run_state_dir(conv.workspace, new_id)
    copy_journal(old_journal, conversation_journal(conv.workspace, new_id), offset)
    TurnLog(run_dir(conv.workspace, new_id)).write(kept)
    conv.reopen(new_id, keep_totals=True)
    if record is not None:
        conv.sent_mode = record.sent_mode  # type: ignore[assignment]
    where = f"before turn {record.number}" if record is not None else "its end"
    conv.say(
        f"forked {old_id} at {where} into a new conversation {new_id} (the old one is kept: "
        "reasonix code --resume lists both)",
        "green",
    )


async def rewind_command(conv: Conversation, arg: str) -> bool:
    records = conv.turn_log.read()
    if not records:
        conv.say("nothing to rewind yet: this conversation has no turns")
        return True
    typed, _, how = arg.strip().partition(" ")
    record = await pick_turn(conv, records, typed)
    if record is None:
        return True
    key = WORDS.get(how.strip().lower(), "")
    if not key:
        key = await _ask_key(
            f"before turn {record.number}: restore [b]oth, [c]ode only, conversa[t]ion only, [f]ork from here, "
            "[n] cancel: "
        )
    if key not in CHOICES or key == "n":
        conv.say("nothing was changed")
        return True
    if key == "f":
        fork(conv, record)
        return True
    if key in ("b", "c") and not await restore_code(conv, records[record.number - 1 :]):
        return True
    if key in ("b", "t"):
        rewind_conversation(conv, record)
    return True


async def fork_command(conv: Conversation, arg: str) -> bool:
    records = conv.turn_log.read()
    typed = arg.strip()
    if not typed:
        fork(conv, None)
        return True
    record = await pick_turn(conv, records, typed) if records else None
    if record is not None:
        fork(conv, record)
    elif not records:
        conv.say("nothing to fork from yet: this conversation has no turns")
    return True
