"""Editing a plan in the user's ``$VISUAL`` / ``$EDITOR``: the document, its parser, and the reopen-until-valid loop.

The document is JSON with comments (``.jsonc``): a header of ``//`` comment lines (the objective, which fields a step
takes, how to cancel), then the plan's planner-written fields as indented JSON. Pretty JSON round-trips exactly, every
editor highlights ``.jsonc``, and a person can read it: each step shows ``id``, ``title``, ``instructions`` and
``depends_on`` always, other fields only when they say something. Lines whose first non-blank characters are ``//``
are ignored wherever they stand (a JSON line can never start that way: JSON strings hold no raw newlines).

The objective is shown in the header and not edited (it is the goal; revisions keep it). Supervisor-owned fields
(``status``, ``result``, ``evidence``, ``revision``) are not in the document. The edited plan is read leniently
(:func:`plans.lenient.read_plan`: aliases, string ids ...) and then made the next revision with
:func:`plans.revision.revise`, which validates the graph and keeps done steps exactly as they were.

When the edit is invalid, the same text reopens with the problems listed at the top as ``//!`` lines (replaced on
each round). The edit is cancelled when the user empties the file (comments and blanks do not count), leaves an
invalid document unchanged, or the editor exits with a failure status (``:cq`` in vi).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from orchestrator.errors import ReasonixError
from orchestrator.text.wording import counted
from plans import PLANNER_STEP_FIELDS, Plan, PlanReadError, PlanValidationError, Step, StepStatus, read_plan, revise

COMMENT = "//"
ERROR_MARK = "//!"
DOCUMENT_NAME = "plan.jsonc"
DEFAULT_EDITOR = "vi"

#: Step fields shown even when they hold their default, so a person sees where they go.
_ALWAYS: frozenset[str] = frozenset({"id", "title", "instructions", "depends_on"})
#: Lists and objects of scalars up to this width stay on one line.
_FLAT_WIDTH = 100
#: A lenient-reader note that is by design here (the document leaves the objective out).
_OBJECTIVE_NOTE = "took the objective from the goal"


# ------------------------------------------------------------------------------------------------ the document


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _step_document(step: Step) -> dict[str, Any]:
    dumped = step.model_dump(mode="json", include=set(PLANNER_STEP_FIELDS))
    defaults = Step.model_fields
    out: dict[str, Any] = {}
    for name in PLANNER_STEP_FIELDS:
        value = getattr(step, name)
        if name in _ALWAYS or value != defaults[name].default:
            out[name] = dumped[name]
    if "verify" in out:
        out["verify"] = [command.model_dump(mode="json", exclude_defaults=True) for command in step.verify]
    return out


def _dumps(value: Any, indent: str = "") -> str:
    """Indented JSON where a short list or object of scalars stays on one line (``"depends_on": ["S1", "S2"]``)."""
    if isinstance(value, dict | list) and value:
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        items = value.values() if isinstance(value, dict) else value
        if len(indent) + len(flat) <= _FLAT_WIDTH and not any(isinstance(v, dict | list) and v for v in items):
            return flat
        inner = indent + "  "
        if isinstance(value, dict):
            parts = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dumps(v, inner)}" for k, v in value.items()]
            return "{\n" + ",\n".join(parts) + f"\n{indent}}}"
        return "[\n" + ",\n".join(f"{inner}{_dumps(v, inner)}" for v in value) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


def document_body(plan: Plan) -> str:
    """The editable JSON of ``plan``: assumptions, non-goals, steps (and ``requires_approval`` when set)."""
    body: dict[str, Any] = {"assumptions": list(plan.assumptions), "non_goals": list(plan.non_goals)}
    if plan.requires_approval:
        body["requires_approval"] = True
    body["steps"] = [_step_document(step) for step in plan.steps]
    return _dumps(body) + "\n"


def document_header(plan: Plan) -> str:
    done = [step.id for step in plan.steps if step.status is StepStatus.DONE]
    lines = [
        f"Plan for: {_one_line(plan.objective)}",
        f"(revision {plan.revision}; the objective is the goal and stays as it is)",
        "",
        "Edit the plan below, save and quit. It is checked when the editor closes: if it is not valid,",
        "this file opens again with the problems listed at the top.",
        "To cancel the edit and go back to the review prompt, empty the file (delete everything) and save.",
        "Lines starting with // are ignored.",
        "",
        "Step fields: id, title, instructions, depends_on (step ids), reads and writes (paths or globs),",
        "  acceptance (criteria), verify (shell command strings, or objects like",
        '  {"command": "...", "expect_exit": 0, "timeout_s": 60}),',
        "  risk (low | medium | high), needs_pro (true | false).",
    ]
    if done:
        lines.append(f"Done steps must stay exactly as they are: {', '.join(done)}.")
    return "".join(f"{COMMENT} {line}".rstrip() + "\n" for line in lines) + "\n"


def plan_document(plan: Plan) -> str:
    """The whole file a person edits: header comments, then :func:`document_body`."""
    return document_header(plan) + document_body(plan)


def _lines(text: str) -> list[str]:
    """Lines split at ``\\n`` only, ends kept: ``str.splitlines`` would also split at U+2028 or U+0085, which
    ``json.dumps(ensure_ascii=False)`` leaves raw inside strings."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def drop_error_block(text: str) -> str:
    """``text`` without the ``//!`` problem lines at its top (written by :func:`with_problems`)."""
    lines = _lines(text)
    start = 0
    while start < len(lines) and lines[start].lstrip().startswith(ERROR_MARK):
        start += 1
    return "".join(lines[start:])


def _blank_comments(text: str) -> str:
    """Comment lines become empty lines, so JSON error positions still name the line in the file."""
    return "".join("\n" if line.lstrip().startswith(COMMENT) else line for line in _lines(text))


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an edited document; ``line`` (1-based, in the text without its error block) if known."""

    message: str
    line: int | None = None


class PlanDocumentError(ReasonixError):
    """The edited plan document is not a valid plan; ``problems`` lists every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.message for p in self.problems))


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    plan: Plan
    notes: tuple[str, ...]
    """What the lenient reader normalized (aliases, string lists ...)."""


def parse_document(text: str, original: Plan) -> ParsedDocument | None:
    """The next revision of ``original`` from an edited document; ``None`` when the document is empty (cancel).

    Raises :class:`PlanDocumentError` with every problem found.
    """
    body = drop_error_block(text)
    blanked = _blank_comments(body)
    if not blanked.strip():
        return None
    try:
        value = json.loads(blanked)
    except json.JSONDecodeError as exc:
        lines = blanked.split("\n")
        near = lines[exc.lineno - 1].strip() if 0 < exc.lineno <= len(lines) else ""
        where = f", near: {near}" if near else ""
        problem = Problem(f"not valid JSON: {exc.msg} (column {exc.colno}{where})", exc.lineno)
        raise PlanDocumentError([problem]) from None
    try:
        lenient = read_plan(value, objective=original.objective)
    except PlanReadError as exc:
        raise PlanDocumentError([Problem(p) for p in exc.problems]) from None
    try:
        revised = revise(original, lenient.plan)
    except PlanValidationError as exc:
        raise PlanDocumentError([Problem(issue.message) for issue in exc.issues]) from None
    return ParsedDocument(plan=revised, notes=tuple(n for n in lenient.notes if n != _OBJECTIVE_NOTE))


def with_problems(text: str, problems: Sequence[Problem]) -> str:
    """``text`` with its old problem lines replaced by these, at the top; line numbers refer to the new file."""
    body = drop_error_block(text)
    count = len(problems)
    offset = count + 2  # headline, one line per problem, a closing blank mark line
    lines = [
        f"{ERROR_MARK} The plan is not valid yet ({counted(count, 'problem')}). "
        "Fix, save and quit; empty the file to cancel the edit."
    ]
    for problem in problems:
        where = f"line {problem.line + offset}: " if problem.line is not None else ""
        lines.append(f"{ERROR_MARK} - {where}{_one_line(problem.message)}")
    lines.append(ERROR_MARK)
    return "".join(line + "\n" for line in lines) + body


def is_unchanged(a: Plan, b: Plan) -> bool:
    """Whether ``b`` is ``a`` apart from the revision number."""
    return b.model_copy(update={"revision": a.revision}) == a


# ------------------------------------------------------------------------------------------------ the editor


def editor_command(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The editor to run: ``explicit``, else ``$VISUAL``, else ``$EDITOR``, else ``vi`` (split like a shell would)."""
    env = os.environ if environ is None else environ
    for candidate in (explicit, env.get("VISUAL"), env.get("EDITOR")):
        if candidate and candidate.strip():
            return shlex.split(candidate)
    return [DEFAULT_EDITOR]


@dataclass(frozen=True, slots=True)
class EditOutcome:
    """The edited plan (the next revision), or ``None`` with ``reason`` saying why the edit was dropped."""

    plan: Plan | None
    notes: tuple[str, ...] = ()
    reason: str = ""
    rounds: int = 0
    """How many times the editor was opened."""


async def edit_plan(
    plan: Plan, command: Sequence[str], *, on_invalid: Callable[[Sequence[Problem]], None] | None = None
) -> EditOutcome:
    """Open ``plan`` as a document in the editor ``command`` until it is valid or the user gives up.

    The editor inherits the terminal (stdin, stdout and stderr). ``on_invalid`` hears each round's problems (to say
    on the console why the editor opens again). The temporary directory is removed afterwards.
    """
    workdir = Path(tempfile.mkdtemp(prefix="reasonix-plan-"))
    path = trio.Path(workdir / DOCUMENT_NAME)
    text = plan_document(plan)
    rounds = 0
    previous_problems: tuple[Problem, ...] = ()
    try:
        while True:
            await path.write_text(text, encoding="utf-8")
            rounds += 1
            try:
                finished = await trio.run_process([*command, str(path)], stdin=None, check=False)
            except OSError as exc:
                return EditOutcome(
                    None,
                    reason=f"could not start the editor {shlex.join(command)!r} ({exc.strerror or exc}); "
                    "set $VISUAL or $EDITOR to an editor that is installed",
                    rounds=rounds,
                )
            if finished.returncode != 0:
                return EditOutcome(
                    None,
                    reason=f"the editor exited with status {finished.returncode}: the edit was discarded",
                    rounds=rounds,
                )
            try:
                edited = await path.read_text(encoding="utf-8")
            except FileNotFoundError:
                edited = ""
            if previous_problems and edited == text:
                return EditOutcome(
                    None, reason="the invalid plan was left unchanged: the edit was discarded", rounds=rounds
                )
            try:
                parsed = parse_document(edited, plan)
            except PlanDocumentError as exc:
                previous_problems = exc.problems
                if on_invalid is not None:
                    on_invalid(exc.problems)
                text = with_problems(edited, exc.problems)
                continue
            if parsed is None:
                return EditOutcome(None, reason="the file was emptied: the edit was cancelled", rounds=rounds)
            return EditOutcome(parsed.plan, notes=parsed.notes, rounds=rounds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
