"""Permission rules, as users know them from Claude Code: ``bash(git status)`` (exact), ``bash(npm test:*)`` (prefix),
``write(src/**)``, ``read(secrets/**)``, ``mcp(server.tool)`` (an MCP server's tool; ``mcp(server)`` or
``mcp(server.*)`` for all of its tools, ``fnmatch`` patterns otherwise); lists ``allow``, ``ask``, ``deny``; precedence
deny > ask > allow > the mode's default.

A compound command (``&&``, ``;``, ``|``, subshells, ``$(…)``, loops) is split with a real shell parser (bashlex)
and every simple command in it must pass on its own: ``bash(git status)`` never allows ``git status && rm -rf .``.
What cannot be parsed asks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

import bashlex
from pathspec import GitIgnoreSpec

Decision = Literal["allow", "ask", "deny"]
_RULE = re.compile(r"^\s*(bash|write|read|mcp)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that does not parse: the user's configuration is at fault."""


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    """``bash``, ``write``, ``read`` or ``mcp``."""
    pattern: str | None
    """None: every call of that kind."""
    text: str

    @classmethod
    def parse(cls, text: str) -> Rule:
        found = _RULE.match(text)
        if found is None:
            raise RuleError(
                f"{text!r} is not a rule; expected bash(COMMAND), bash(PREFIX:*), write(GLOB), read(GLOB) "
                "or mcp(SERVER.TOOL)"
            )
        pattern = found.group(2)
        pattern = None if pattern is None or pattern.strip() in ("", "*", "**") else pattern.strip()
        return cls(kind=found.group(1), pattern=pattern, text=text.strip())

    def matches_command(self, command: str) -> bool:
        if self.kind != "bash":
            return False
        if self.pattern is None:
            return True
        if self.pattern.endswith(":*"):
            prefix = self.pattern[:-2].strip()
            return command == prefix or command.startswith(prefix + " ")
        return command == " ".join(self.pattern.split())

    def matches_path(self, kind: str, path: str) -> bool:
        if self.kind != kind:
            return False
        if self.pattern is None:
            return True
        if kind == "mcp":
            return path == self.pattern or path.startswith(self.pattern + ".") or fnmatchcase(path, self.pattern)
        return GitIgnoreSpec.from_lines([self.pattern]).match_file(path.lstrip("./") or ".")


class _Commands(bashlex.ast.nodevisitor):  # type: ignore[misc]
    """Each simple command as written (its words and redirections), whitespace collapsed."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.found: list[str] = []

    def visitcommand(self, node: Any, parts: Any) -> None:
        start, end = node.pos
        text = " ".join(self.source[start:end].split())
        if text:
            self.found.append(text)


def split_command(command: str) -> list[str] | None:
    """The simple commands in ``command`` as written (whitespace collapsed), or None when it cannot be parsed."""
    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises its own errors and, on odd input, plain ones: all mean "cannot tell"  # noqa: BLE001
        return None
    visitor = _Commands(command)
    for tree in trees:
        visitor.visit(tree)
    return visitor.found or None


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision | None
    """None: no rule decided; the mode's default applies."""
    rule: str | None = None
    """The rule that decided, or why nothing could (``unparseable``)."""


@dataclass(frozen=True, slots=True)
class Rules:
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def parse(cls, allow: Iterable[str] = (), ask: Iterable[str] = (), deny: Iterable[str] = ()) -> Rules:
        return cls(
            tuple(Rule.parse(r) for r in allow), tuple(Rule.parse(r) for r in ask), tuple(Rule.parse(r) for r in deny)
        )

    def _first(self, rules: Sequence[Rule], test: Any) -> Rule | None:
        return next((r for r in rules if test(r)), None)

    def for_command(self, command: str) -> Verdict:
        parts = split_command(command)
        whole = " ".join(command.split())
        if parts is None:
            denied = self._first(self.deny, lambda r: r.matches_command(whole))
            return Verdict("deny", denied.text) if denied else Verdict("ask", "unparseable")
        verdicts = [self._one(part) for part in parts]
        for decision in ("deny", "ask"):
            hit = next((v for v in verdicts if v.decision == decision), None)
            if hit is not None:
                return hit
        if all(v.decision == "allow" for v in verdicts):
            return Verdict("allow", ", ".join(dict.fromkeys(v.rule or "" for v in verdicts)))
        return Verdict(None)

    def _one(self, part: str) -> Verdict:
        for decision, rules in (("deny", self.deny), ("ask", self.ask), ("allow", self.allow)):
            rule = self._first(rules, lambda r: r.matches_command(part))
            if rule is not None:
                return Verdict(decision, rule.text)  # type: ignore[arg-type]
        return Verdict(None)

    def for_path(self, kind: str, path: str) -> Verdict:
        for decision, rules in (("deny", self.deny), ("ask", self.ask), ("allow", self.allow)):
            rule = self._first(rules, lambda r: r.matches_path(kind, path))
            if rule is not None:
                return Verdict(decision, rule.text)  # type: ignore[arg-type]
        return Verdict(None)
