"""Permission rules and the gate that applies them before each tool call."""

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
