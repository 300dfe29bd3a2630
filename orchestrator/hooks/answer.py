"""What a hook answered: its exit code and output read the way Claude Code reads them.

* exit 0: go on. A JSON object on stdout may decide (below); other stdout is context for ``session_start`` and
  ``user_prompt`` (as Claude Code adds it) and ignored elsewhere.
* exit 2: block, with stderr as the reason (a ``pre_tool`` call is refused and the model reads why; a prompt is not
  sent; a ``stop`` asks the session to go on).
* any other exit code, a timeout or a hook that cannot start: a notice for the user, and the session goes on.

JSON answers (either spelling): ``{"decision": "allow" | "deny" | "ask" | "block", "reason": "...", "context": "..."}``
or Claude Code's ``{"decision": "approve" | "block", "reason"}``, ``{"continue": false, "stopReason"}`` and
``{"hookSpecificOutput": {"permissionDecision", "permissionDecisionReason", "additionalContext"}}``.
``systemMessage`` is shown to the user. ``continue: false`` blocks what the hook was asked about and also asks that
the turn stop (:attr:`HookAnswer.halt`; a ``stop`` hook's ``continue: false`` lets the turn end).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Decision = Literal["allow", "deny", "ask", "block"]
_RANK: dict[str | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3, "block": 3}
_SPELLINGS = {"approve": "allow", "allow": "allow", "deny": "deny", "ask": "ask", "block": "block"}
BLOCK_EXIT = 2


class HookAnswer(BaseModel):
    """One hook's answer, or several combined (the strictest decision wins, contexts are joined in order)."""

    model_config = ConfigDict(frozen=True)

    decision: Decision | None = None
    reason: str = ""
    context: str = ""
    notices: tuple[str, ...] = ()
    """What the user is told: a hook that failed, timed out or could not start."""
    halt: bool = False
    """``{"continue": false}``: besides blocking what it was asked about, the hook asks that the turn stop."""

    @property
    def blocks(self) -> bool:
        return self.decision in ("deny", "block")

    def then(self, other: HookAnswer) -> HookAnswer:
        """This answer followed by ``other``'s (the next hook of the same event)."""
        first = _RANK[other.decision] > _RANK[self.decision]
        decision, reason = (other.decision, other.reason) if first else (self.decision, self.reason)
        context = "\n".join(c for c in (self.context, other.context) if c)
        return HookAnswer(
            decision=decision,
            reason=reason,
            context=context,
            notices=self.notices + other.notices,
            halt=self.halt or other.halt,
        )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def from_json(data: dict[str, Any]) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    raw = specific.get("permissionDecision") or data.get("decision")
    decision = _SPELLINGS.get(raw) if isinstance(raw, str) else None
    reason = _text(specific.get("permissionDecisionReason")) or _text(data.get("reason"))
    halt = data.get("continue") is False
    if halt:
        decision, reason = "block", _text(data.get("stopReason")) or reason
    context = _text(specific.get("additionalContext")) or _text(data.get("context"))
    shown = _text(data.get("systemMessage"))
    notices = (shown,) if shown else ()
    return HookAnswer(decision=decision, reason=reason, context=context, halt=halt, notices=notices)


def read_answer(label: str, exit_code: int, stdout: str, stderr: str, *, plain_context: bool) -> HookAnswer:
    """The answer of a hook that exited with ``exit_code``; ``label`` names it in a notice."""
    if exit_code == BLOCK_EXIT:
        return HookAnswer(decision="block", reason=stderr.strip() or f"blocked by the hook {label}")
    if exit_code != 0:
        detail = (stderr.strip() or stdout.strip())[:500]
        said = f": {detail}" if detail else " (it printed nothing)"
        return HookAnswer(notices=(f"the hook {label} failed with exit code {exit_code}{said}; going on",))
    text = stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return HookAnswer(notices=(f"the hook {label} printed something that is not a JSON object; ignored",))
        if isinstance(data, dict):
            return from_json(data)
    return HookAnswer(context=text if plain_context else "")
