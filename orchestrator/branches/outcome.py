"""What merging a branch back says, and the error a branch raises when its copy cannot be made or read."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from orchestrator.errors import ReasonixError

SHOWN = 8
"""How many paths a reason names before it says "and N more"."""


class BranchError(ReasonixError):
    """A branch's copy could not be made, read or merged because git or the file system failed (the message says
    which and what to do); a conflict is not an error but a :class:`MergeOutcome` with ``merged=False``."""


def names(paths: Sequence[str]) -> str:
    """``paths`` joined, the first :data:`SHOWN` of them and how many more."""
    shown = ", ".join(paths[:SHOWN])
    return shown + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


class MergeOutcome(BaseModel):
    """The result of :meth:`~orchestrator.branches.workspace.BranchWorkspace.merge_back`. All or nothing: when
    ``merged`` is false, no file of the live workspace was touched, and ``reason`` says which files and why.

    Nothing here names whose branch it was (a goal's step, a subagent): each caller says that in its own words,
    around :attr:`reason` or from the clauses :meth:`conflicts_said` and :meth:`undeclared_said`."""

    model_config = ConfigDict(frozen=True)

    merged: bool
    changed: tuple[str, ...] = ()
    """The paths the branch changed (added, modified, deleted), relative to the workspace, sorted."""
    conflicts: tuple[str, ...] = ()
    """Paths changed both in the branch and in the live workspace since the branch began, in ways that do not merge."""
    why: tuple[str, ...] = ()
    """Why each path of :attr:`conflicts` does not merge, in the same order (``both changed the same lines``, …)."""
    undeclared: tuple[str, ...] = ()
    """Paths the branch changed outside the declared writes it was merged against."""
    declared: tuple[str, ...] = ()
    """The declared writes the merge was held to."""
    reason: str = ""
    """What happened, naming no step or subagent: ``merged 2 changed files into the workspace``, or ``nothing in the
    workspace was changed: changed both in its copy and in the workspace since it began: a.py (both changed the same
    lines).``"""

    def conflicts_said(self) -> str:
        """The conflicts as one clause without a full stop ("" for none)."""
        if not self.conflicts:
            return ""
        items = [f"{path} ({why})" for path, why in zip(self.conflicts, self.why, strict=True)]
        return f"changed both in its copy and in the workspace since it began: {names(items)}"

    def undeclared_said(self) -> str:
        """The writes outside the declared ones as one clause without a full stop ("" for none)."""
        if not self.undeclared:
            return ""
        allowed = ", ".join(self.declared) if self.declared else "none"
        return f"it wrote outside its declared files ({allowed}): {names(list(self.undeclared))}"
