"""Plan review (plan mode): the user approves the plan, sends feedback to the planner, edits it, or cancels.

The goal loop holds a :class:`Reviewer` and calls ``await reviewer.review(plan, diff_text=...)`` whenever a plan (or a
revision) awaits review; it gets a :class:`ReviewDecision` back and reports it as a ``ReviewDecided`` event
(:meth:`ReviewDecision.event`). Three reviewers:

* :class:`TerminalReviewer`: a person at the terminal (the plan tree, the diff, a one-letter prompt, ``$EDITOR``);
* :class:`AutoApprove`: ``--yes``; every plan is approved, and the decision says it was automatic;
* :class:`ScriptedReviewer`: a scenario's review answers, in order.

:func:`require_interactive` is checked before a goal starts: without a terminal and without ``--yes`` there is nobody
to ask, so the run stops at once with a clear message instead of waiting on input that never comes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, Self

import trio
from pydantic import BaseModel, ConfigDict, model_validator
from rich.console import Console
from rich.text import Text

from orchestrator.errors import ReviewScriptExhaustedError, ReviewUnavailableError
from orchestrator.events import ReviewDecided
from orchestrator.policy.verify import pending_commands
from orchestrator.review.editor import Problem, edit_plan, editor_command, is_unchanged
from orchestrator.text.safe_text import neutralise, neutralise_model
from orchestrator.text.wording import counted
from orchestrator.ui.goal_lines import print_whole
from plans import Plan, find_issues, plan_tree

DecisionKind = Literal["approve", "revise", "edit", "cancel"]


class ReviewDecision(BaseModel):
    """What the reviewer decided. ``feedback`` goes with ``revise``; ``plan`` (edited and valid) goes with ``edit``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: DecisionKind
    feedback: str = ""
    plan: Plan | None = None
    automatic: bool = False
    """True when no person decided (``--yes``)."""
    unconfined_approved: tuple[str, ...] = ()
    """With ``approve``: the verify commands the review named as running without a sandbox (the person saw that)."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.kind == "revise" and not self.feedback.strip():
            raise ValueError("a 'revise' decision needs the feedback for the planner")
        if self.kind == "edit":
            if self.plan is None:
                raise ValueError("an 'edit' decision needs the edited plan")
            issues = find_issues(self.plan)
            if issues:
                raise ValueError("the edited plan is invalid: " + "; ".join(issue.message for issue in issues))
        elif self.plan is not None:
            raise ValueError(f"only an 'edit' decision carries a plan, not {self.kind!r}")
        return self

    def event(self) -> ReviewDecided:
        """The goal event that reports this decision."""
        return ReviewDecided(decision=self.kind, automatic=self.automatic, feedback=self.feedback)


class Reviewer(Protocol):
    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        """Decide on ``plan``; ``diff_text`` is what changed since the previous revision (shown to the user)."""
        ...


class AutoApprove:
    """``--yes``: every plan is approved without asking (the decision is marked automatic)."""

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        return ReviewDecision(kind="approve", automatic=True)


class ScriptedReviewer:
    """A scenario's review answers, one per call, in order. ``seen`` records each (plan, diff_text) reviewed."""

    def __init__(self, answers: Sequence[ReviewDecision | Mapping[str, Any]]) -> None:
        self._answers = [a if isinstance(a, ReviewDecision) else ReviewDecision.model_validate(a) for a in answers]
        self._next = 0
        self.seen: list[tuple[Plan, str | None]] = []

    @property
    def remaining(self) -> int:
        return len(self._answers) - self._next

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        self.seen.append((plan, diff_text))
        if self._next >= len(self._answers):
            raise ReviewScriptExhaustedError(
                f"plan review #{len(self.seen)} (revision {plan.revision}) was asked for, but the scenario has only "
                f"{counted(len(self._answers), 'review answer')}; "
                "add an answer to the scenario's review list"
            )
        answer = self._answers[self._next]
        self._next += 1
        return answer


# ------------------------------------------------------------------------------------------------ the terminal

PROMPT = "[a]pprove / [r]evise with feedback / [e]dit / [c]ancel: "
FEEDBACK_PROMPT = "Feedback for the planner (empty to go back): "
_ANSWERS: dict[str, DecisionKind] = {
    "a": "approve",
    "approve": "approve",
    "r": "revise",
    "revise": "revise",
    "e": "edit",
    "edit": "edit",
    "c": "cancel",
    "cancel": "cancel",
}


def _read_stdin(prompt: str) -> str:
    """The default line reader: the prompt is already on the console, so read a bare line."""
    return input()


class TerminalReviewer:
    """Asks the person at the terminal.

    ``read_line(prompt)`` returns one typed line (``EOFError`` when input has ended). The reviewer prints every
    prompt on ``console`` itself before calling it; the default reads standard input. It runs in a worker thread
    that is abandoned on cancellation, so a cancelled review never waits for Enter. ``editor`` overrides
    ``$VISUAL`` / ``$EDITOR`` (default ``vi``) for the edit; see :mod:`orchestrator.review.editor` for the document.
    ``show_plan=False`` when a live display on the same console has just drawn the plan and its diff.
    """

    def __init__(
        self,
        console: Console,
        *,
        read_line: Callable[[str], str] | None = None,
        editor: str | None = None,
        show_plan: bool = True,
        estimate: Callable[[Plan], str] | None = None,
        unconfined: str | None = None,
    ) -> None:
        self._estimate = estimate
        self._unconfined = unconfined
        """Why verify commands would run without a sandbox (``None``: they would not)."""
        self._console = console
        self._read_line = read_line or _read_stdin
        self._editor = editor
        self._show_plan = show_plan

    async def _ask(self, prompt: str) -> str | None:
        """One line from the user, or ``None`` when input has ended."""
        self._console.print(Text(prompt), end="")
        try:
            line = await trio.to_thread.run_sync(self._read_line, prompt, abandon_on_cancel=True)
        except EOFError:
            self._console.print()
            return None
        return line.strip()

    def _show(self, plan: Plan, diff_text_: str | None) -> None:
        self._console.print()
        self._console.print(Text(f"Plan review · revision {plan.revision}", style="bold"))
        if self._estimate is not None:
            self._console.print(Text(self._estimate(plan), style="dim"), soft_wrap=True)
        for line in self._unconfined_notice(plan):
            self._console.print(Text(neutralise(line), style="red"), soft_wrap=True)
        if not self._show_plan:
            return
        print_whole(self._console, plan_tree(neutralise_model(plan), detail=True))
        if diff_text_:
            self._console.print(Text("Changes since the previous revision:", style="bold"))
            self._console.print(Text(neutralise(diff_text_.rstrip("\n"))))

    def _unconfined_notice(self, plan: Plan) -> list[str]:
        commands = pending_commands(plan) if self._unconfined is not None else []
        if not commands:
            return []
        head = f"No sandbox ({self._unconfined}): approving runs these verify commands on this machine, unconfined:"
        return [head, *(f"  $ {c}" for c in commands)]

    def _say_invalid(self, problems: Sequence[Problem]) -> None:
        self._console.print(
            Text(
                f"The edited plan is not valid ({counted(len(problems), 'problem')}); reopening the editor.",
                style="yellow",
            )
        )
        for problem in problems:
            self._console.print(Text(f"  - {neutralise(problem.message)}", style="yellow"))

    async def _edit(self, plan: Plan) -> ReviewDecision | None:
        outcome = await edit_plan(plan, editor_command(self._editor), on_invalid=self._say_invalid)
        if outcome.plan is None:
            self._console.print(Text(outcome.reason[:1].upper() + outcome.reason[1:] + ".", style="yellow"))
            return None
        if is_unchanged(plan, outcome.plan):
            self._console.print(Text("No changes were made to the plan.", style="yellow"))
            return None
        if outcome.notes:
            self._console.print(Text(neutralise("Read with adjustments: " + "; ".join(outcome.notes)), style="dim"))
        # The edited revision comes back for review at once, with its tree and "Changes since the previous revision":
        # showing them here too would print both twice.
        self._console.print(Text(f"Edited plan read: it becomes revision {outcome.plan.revision}", style="bold"))
        return ReviewDecision(kind="edit", plan=outcome.plan)

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        self._show(plan, diff_text)
        while True:
            answer = await self._ask(PROMPT)
            if answer is None:
                self._console.print(Text("Input ended: the plan review is cancelled.", style="yellow"))
                return ReviewDecision(kind="cancel")
            kind = _ANSWERS.get(answer.lower())
            if kind is None:
                shown = f"{answer!r} is not" if answer else "An empty answer is not"
                self._console.print(Text(f"{shown} one of the choices: type a, r, e or c.", style="yellow"))
                continue
            if kind == "revise":
                feedback = await self._ask(FEEDBACK_PROMPT)
                if not feedback:
                    self._console.print(Text("No feedback given; back to the choices.", style="yellow"))
                    continue
                return ReviewDecision(kind="revise", feedback=feedback)
            if kind == "edit":
                edited = await self._edit(plan)
                if edited is None:
                    continue
                return edited
            if kind == "approve" and self._unconfined is not None:
                return ReviewDecision(kind=kind, unconfined_approved=tuple(pending_commands(plan)))
            return ReviewDecision(kind=kind)


# ------------------------------------------------------------------------------------------------ no terminal


def require_interactive(stdin_isatty: bool, yes: bool) -> None:
    """Stop a goal that would wait for a review nobody can give (no terminal, no ``--yes``)."""
    if yes or stdin_isatty:
        return
    raise ReviewUnavailableError(
        "the plan needs your review, but standard input is not a terminal, so nobody can be asked. "
        'Pass --yes to approve the plan without review, or review it first: run `reasonix plan "<objective>"` '
        "in a terminal (it saves the approved plan), then `reasonix exec PLAN_FILE`."
    )


def make_reviewer(
    console: Console,
    *,
    yes: bool,
    stdin_isatty: bool,
    editor: str | None = None,
    show_plan: bool = True,
    estimate: Callable[[Plan], str] | None = None,
    unconfined: str | None = None,
) -> Reviewer:
    """The reviewer for a run: :class:`AutoApprove` with ``--yes``, else :class:`TerminalReviewer` (if possible).
    ``unconfined``: why verify commands would run without a sandbox, named at the review."""
    require_interactive(stdin_isatty, yes)
    if yes:
        return AutoApprove()
    return TerminalReviewer(console, editor=editor, show_plan=show_plan, estimate=estimate, unconfined=unconfined)
