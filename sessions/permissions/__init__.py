"""Permission rules and the gate that applies them before each tool call: ``allow`` / ``ask`` / ``deny`` lists of
``bash(git status)``, ``bash(npm test:*)``, ``write(src/**)``, ``read(secrets/**)``, with deny > ask > allow > the
mode's default. Allow rules match only plain lines of literal words (``shell``); deny and ask rules see through
wrappers, ``sh -c`` and every substitution (``unwrap``); paths match as the file tools resolve them. A refusal reaches
the model as a tool result, so the prefix never changes."""

from sessions.permissions.gate import Answer, ApprovalMode, Asker, PermissionGate, Question
from sessions.permissions.rules import Rule, RuleError, Rules, Verdict, split_command

__all__ = [
    "Answer",
    "ApprovalMode",
    "Asker",
    "PermissionGate",
    "Question",
    "Rule",
    "RuleError",
    "Rules",
    "Verdict",
    "split_command",
]
