"""Permission rules, as users know them from Claude Code: ``bash(git status)`` (exact), ``bash(npm test:*)`` (prefix),
``write(src/**)``, ``read(secrets/**)``, ``mcp(server.tool)`` (an MCP server's tool; ``mcp(server)`` or
``mcp(server.*)`` for all of its tools, ``fnmatch`` patterns otherwise); lists ``allow``, ``ask``, ``deny``; precedence
deny > ask > allow > the mode's default.

A command line is read with :mod:`sessions.permissions.shell`. An allow rule allows exactly the command it names: it
matches only a *plain* line (simple commands of literal words joined by ``&&``, ``;``, ``|``…), every simple command
in it must be allowed, and every redirection that writes must be allowed by a ``write`` rule; a line with any
expansion or substitution is never allowed by a rule (unless it is, byte for byte, the text of an exact rule the user
approved). Deny and ask rules see through assignments, quoting, backslashes, paths and wrappers
(:mod:`sessions.permissions.unwrap`), into every command substitution, ``sh -c`` and ``eval``; redirections are
checked against ``write`` / ``read`` rules. What cannot be read asks, unless a deny rule matches what could be read.

Paths are matched as the file tools resolve them: normalised and relative to the workspace (``.env``,
``x/../secrets/key`` is ``secrets/key``). Deny rules are a convenience, not a boundary: the sandbox is.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

from pathspec import GitIgnoreSpec

from sessions.permissions.shell import Line, Word, scan
from sessions.permissions.unwrap import forms

Decision = Literal["allow", "ask", "deny"]
PathCandidates = Callable[[str], tuple[str, ...] | None]
"""A raw path -> the workspace-relative paths it stands for (as written, then as resolved: what is opened), or None
when it leads outside the workspace."""
_RULE = re.compile(r"^\s*(bash|write|read|mcp|web)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_HARMLESS = re.compile(r"/dev/(null|stdout|stderr|tty|fd/\d+)")
_UNKNOWN_TARGET = re.compile(r"^~|[*?\[{]")


class RuleError(ValueError):
    """A rule that does not parse: the user's configuration is at fault."""


def canonical(command: str) -> str:
    """The text an exact rule is compared with: stripped, and blanks collapsed where no quote could hold them."""
    text = command.strip(" \t\n")
    return text if any(q in text for q in "'\"\\\n$`") else re.sub(r"[ \t]+", " ", text)


def lexical(path: str) -> tuple[str, ...] | None:
    """``path`` normalised relative to the workspace, or None when it is absolute or climbs out of it."""
    if not path or path.startswith(("/", "~")):
        return None
    norm = posixpath.normpath(path)
    return None if norm == ".." or norm.startswith("../") else (norm,)


def _words(pattern: str) -> tuple[str, ...] | None:
    """A bash rule's words when it names one plain command without redirections, else None (a text-only rule)."""
    line = scan(pattern)
    if not line.plain or len(line.commands) != 1 or line.commands[0].redirects:
        return None
    return tuple(w.value for w in line.commands[0].words)


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    """``bash``, ``write``, ``read``, ``mcp`` or ``web`` (a host, for ``web_fetch``)."""
    pattern: str | None
    """None: every call of that kind."""
    text: str
    prefix: bool = False
    """``bash(PREFIX:*)``: ``pattern`` holds the prefix."""
    words: tuple[str, ...] | None = None
    """A bash rule's command words (None: compared as text only)."""
    spec: GitIgnoreSpec | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Rule:
        found = _RULE.match(text)
        if found is None:
            raise RuleError(
                f"{text!r} is not a rule; expected bash(COMMAND), bash(PREFIX:*), write(GLOB), read(GLOB), "
                "mcp(SERVER.TOOL) or web(HOST)"
            )
        kind, pattern = found.group(1), found.group(2)
        pattern = None if pattern is None or pattern.strip() in ("", "*", "**") else pattern.strip()
        if pattern is None:
            return cls(kind=kind, pattern=None, text=text.strip())
        if kind == "bash":
            prefix = pattern.endswith(":*")
            pattern = pattern[:-2].strip() if prefix else pattern
            return cls(kind, pattern, text.strip(), prefix=prefix, words=_words(pattern))
        spec = GitIgnoreSpec.from_lines([pattern]) if kind in ("write", "read") else None
        return cls(kind, pattern, text.strip(), spec=spec)

    def matches_text(self, command: str) -> bool:
        """The whole line is this exact rule's command as written (what "always" saved)."""
        return (
            self.kind == "bash"
            and self.pattern is not None
            and not self.prefix
            and (canonical(command) == canonical(self.pattern))
        )

    def allows(self, words: list[str]) -> bool:
        """An allow rule against a plain command's literal words, as bash will run them (no base names)."""
        if self.kind != "bash" or self.words is None:
            return self.kind == "bash" and self.pattern is None
        n = len(self.words)
        return tuple(words[:n]) == self.words if self.prefix else tuple(words) == self.words

    def covers(self, form: list[str]) -> bool:
        """A deny or ask rule against one form of a command (wrappers off, base name first)."""
        if self.kind != "bash":
            return False
        if self.pattern is None:
            return True
        if self.words is None or not self.words:
            return False
        want = (posixpath.basename(self.words[0]) or self.words[0], *self.words[1:])
        return tuple(form[: len(want)]) == want if self.prefix else tuple(form) == want

    def covers_text(self, command: str) -> bool:
        """A deny or ask rule against the line's text (text-only rules, and lines that cannot be read)."""
        if self.kind != "bash" or self.pattern is None:
            return self.kind == "bash"
        text, want = canonical(command), canonical(self.pattern)
        return text == want or (self.prefix and text.startswith(want + " "))

    def matches_path(self, kind: str, path: str) -> bool:
        if self.kind != kind:
            return False
        if self.pattern is None:
            return True
        if kind == "mcp":
            return path == self.pattern or path.startswith(self.pattern + ".") or fnmatchcase(path, self.pattern)
        if kind == "web":  # a host: itself, its subdomains, or a glob (web(*.python.org))
            host = self.pattern.lower()
            return path == host or path.endswith("." + host) or fnmatchcase(path, host)
        return self.spec is not None and self.spec.match_file(path)


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision | None
    """None: no rule decided; the mode's default applies."""
    rule: str | None = None
    """The rule that decided, or why nothing could (``unparseable``)."""


def split_command(command: str) -> list[str] | None:
    """The simple commands in ``command`` as written (whitespace collapsed), or None when it cannot be read."""
    line = scan(command)
    if line.problem is not None or not line.commands:
        return None
    return [line.text(c) for c in line.commands]


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

    def for_command(self, command: str, paths: PathCandidates = lexical) -> Verdict:
        """The verdict on a whole command line; ``paths`` places redirection targets in the workspace."""
        line = scan(command)
        for decision, rules in (("deny", self.deny), ("ask", self.ask)):
            hit = self._restricted(rules, line, command)
            if hit is None:
                hit = self._redirects(line, decision, paths)
            if hit is not None:
                return Verdict(decision, hit)  # type: ignore[arg-type]
        if line.problem is not None:
            return Verdict("ask", "unparseable")
        exact = next((r for r in self.allow if r.matches_text(command)), None)
        if exact is not None:
            return Verdict("allow", exact.text)
        everything = next((r for r in self.allow if r.kind == "bash" and r.pattern is None), None)
        if everything is not None and line.commands:
            return Verdict("allow", everything.text)
        if not line.plain or not line.commands:
            return Verdict(None)
        used: list[str] = []
        for command_ in line.commands:
            words = [w.value for w in command_.words]
            rule = next((r for r in self.allow if r.allows(words)), None) if words else None
            if words and rule is None:
                return Verdict(None)
            for redirect in command_.redirects:
                if redirect.writes and self._target("write", redirect.target, paths) != "allow":
                    return Verdict(None)
            if rule is not None:
                used.append(rule.text)
        return Verdict("allow", ", ".join(dict.fromkeys(used))) if used else Verdict(None)

    def _restricted(self, rules: tuple[Rule, ...], line: Line, command: str) -> str | None:
        """The first deny (or ask) rule that covers any command of the line."""
        everything = [list(forms([w.value for w in c.words])) for c in line.commands]
        for rule in rules:
            if rule.covers_text(command) or any(rule.covers(f) for found in everything for f in found):
                return rule.text
        return None

    def _redirects(self, line: Line, decision: str, paths: PathCandidates) -> str | None:
        for command in line.commands:
            for redirect in command.redirects:
                kinds = (["write"] if redirect.writes else []) + (["read"] if redirect.reads else [])
                for kind in kinds:
                    verdict = self._path_verdict(kind, redirect.target, paths)
                    if verdict.decision == decision:
                        return verdict.rule
        return None

    def _target(self, kind: str, target: Word, paths: PathCandidates) -> Decision | None:
        if _HARMLESS.fullmatch(target.value):
            return "allow"
        return self._path_verdict(kind, target, paths).decision

    def _path_verdict(self, kind: str, target: Word, paths: PathCandidates) -> Verdict:
        if not target.literal or _UNKNOWN_TARGET.search(target.value) or _HARMLESS.fullmatch(target.value):
            return Verdict(None)
        return self.for_path(kind, target.value, paths)

    def for_path(self, kind: str, path: str, paths: PathCandidates = lexical) -> Verdict:
        """The verdict on a path (or an MCP tool): deny or ask when any form of it matches, allow when the path it
        resolves to (the last form) does."""
        candidates = (path,) if kind in ("mcp", "web") else paths(path)
        if candidates is None:
            return Verdict(None)
        for decision, rules in (("deny", self.deny), ("ask", self.ask)):
            rule = next((r for r in rules for p in candidates if r.matches_path(kind, p)), None)
            if rule is not None:
                return Verdict(decision, rule.text)  # type: ignore[arg-type]
        allowed = next((r for r in self.allow if r.matches_path(kind, candidates[-1])), None)
        if allowed is not None:
            return Verdict("allow", allowed.text)
        return Verdict(None)
