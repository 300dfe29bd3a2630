"""Just enough of bash's grammar to judge a command line: every simple command in it, and whether it is *plain*.

A line is plain when bash would run exactly the simple commands read here, word for word: commands joined by ``;``,
``&&``, ``||``, ``|``, ``&`` or newlines, every word literal after quote removal, and redirections to literal
targets. Anything else — a ``$`` of any kind, a backtick, ``<(…)``, ``$'…'``, a subshell, a reserved word, a here-
document whose body expands — makes the line not plain, and an allow rule then never matches it.

Every command substitution is read as a command line of its own wherever it stands (in words, double quotes,
``${…}`` with its subscripts and patterns, ``$((…))``, unquoted here-document bodies), so deny rules see the commands
inside. Words split on space, tab and newline only, as bash splits them. Malformed input (an open quote, an unclosed
``$(``) sets ``problem``; what was read up to there is kept for the deny rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BLANKS = " \t"
_ENDS_WORD = " \t\n;&|()<>"
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac"})
_RESERVED |= {"select", "function", "time", "coproc", "{", "}", "!", "[["}
_OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "|", "&")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">")
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_FD = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_NESTING = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b", "E": "\x1b"}


@dataclass(frozen=True, slots=True)
class Word:
    raw: str
    """As written."""
    value: str
    """After quote removal; expansions kept as written."""
    literal: bool
    """No expansion of any kind: ``value`` is exactly what bash passes."""


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    """``>``, ``>>``, ``<``, ``<<`` (a here-document: ``target`` is its delimiter), ``2>&1`` is ``>&`` with ``1``."""
    target: Word

    @property
    def writes(self) -> bool:
        """Opens a file for writing (``>&`` onto a descriptor does not)."""
        if self.op == ">&":
            return not (self.target.value.isdigit() or self.target.value == "-")
        return self.op in _WRITES

    @property
    def reads(self) -> bool:
        """Opens a file for reading (``<&`` onto a descriptor, or ``<&-`` closing one, does not)."""
        if self.op == "<&":
            return not (self.target.value.isdigit() or self.target.value == "-")
        return self.op in ("<", "<>")


@dataclass(slots=True)
class Command:
    start: int
    end: int
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(slots=True)
class Line:
    source: str
    commands: list[Command]
    """Every simple command, nested ones included, in order of where they start."""
    plain: bool
    problem: str | None
    """Why the line is malformed, or None."""

    def text(self, command: Command) -> str:
        return " ".join(self.source[command.start : command.end].split())


@dataclass(slots=True)
class _Pending:
    command: Command | None = None
    command_position: bool = True
    skip_name: bool = False


class _Words:
    """Reads words: quoting, expansions and the substitutions inside them (each a command list of its own)."""

    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0
        self.commands: list[Command] = []
        self.plain = True
        self.problem: str | None = None
        self.nesting = 0
        self.heredocs: list[tuple[str, bool, bool]] = []  # delimiter, strip tabs (<<-), body expands (unquoted)

    def fail(self, why: str) -> None:
        if self.problem is None:
            self.problem = why
        self.i = len(self.s)

    def at(self, offset: int = 0) -> str:
        return self.s[self.i + offset : self.i + offset + 1]

    def command_list(self, closer: str | None) -> None:  # a substitution's commands: :class:`_Scanner` reads them
        raise NotImplementedError

    # words

    def read_word(self, closer: str | None) -> Word:
        s, start = self.s, self.i
        value: list[str] = []
        literal = True
        while self.i < len(s):
            c = s[self.i]
            if c in "<>" and self.at(1) == "(":
                begin = self.i
                self.i += 2
                literal = False
                self.command_list(")")
                value.append(s[begin : self.i])
            elif c in _ENDS_WORD or (closer == "`" and c == "`"):
                break
            elif c == "\\":
                if self.at(1) != "\n":
                    value.append(self.at(1))
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:  # pragma: no mutate (found after the quote at i, so never 0: `<= 0`, `< 1` read the same)
                    value.append(s[self.i + 1 :])
                    self.fail("an unclosed '")
                    break
                value.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                literal = self.double_quoted(value) and literal
            elif c == "$" and self.at(1) == "'":
                literal = False
                value.append(self.ansi_c())
            elif c == "$" and self.at(1) == '"':
                literal = False
                self.i += 1
            elif c == "$":
                literal = False
                self.dollar(value)
            elif c == "`":
                literal = False
                self.backtick(value)
            else:
                value.append(c)
                self.i += 1
        if not literal:
            self.plain = False
        return Word(s[start : self.i], "".join(value), literal)

    def double_quoted(self, value: list[str]) -> bool:
        literal = True
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return literal
            if c == "\\" and self.at(1) in ("$", "`", '"', "\\", "\n"):
                value.append("" if self.at(1) == "\n" else self.at(1))
                self.i += 2
            elif c == "$":
                literal = False
                self.dollar(value)
            elif c == "`":
                literal = False
                self.backtick(value)
            else:
                value.append(c)
                self.i += 1
        self.fail('an unclosed "')
        return False

    def ansi_c(self) -> str:
        """``$'…'``, decoded for the deny rules (the word still counts as not literal)."""
        self.i += 2
        out: list[str] = []
        while self.i < len(self.s) and self.s[self.i] != "'":
            c = self.s[self.i]
            if c != "\\":
                out.append(c)
                self.i += 1
                continue
            nxt = self.at(1)
            hexa = re.match(r"x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|([0-7]{1,3})", self.s[self.i + 1 :])
            if hexa is not None:
                out.append(chr(int(hexa.group(1) or hexa.group(2) or hexa.group(3), 8 if hexa.group(3) else 16)))
                self.i += 1 + hexa.end()
            else:
                out.append(_ANSI.get(nxt, nxt))
                self.i += 2
        if self.i >= len(self.s):
            self.fail("an unclosed $'")
        self.i += 1
        return "".join(out)

    def dollar(self, value: list[str]) -> None:
        start = self.i
        self.plain = False
        self.nesting += 1
        try:
            self._dollar()
        finally:
            self.nesting -= 1
        value.append(self.s[start : self.i])

    def _dollar(self) -> None:
        if self.nesting > _NESTING:
            self.fail("expansions nested too deeply")
            return
        if self.s.startswith("$((", self.i):
            self.arithmetic()
        elif self.at(1) == "(":
            self.i += 2
            self.command_list(")")
        elif self.at(1) == "{":
            self.i += 2
            self.braced()
        else:
            name = _NAME.match(self.s, self.i + 1)
            self.i = name.end() if name else self.i + 1

    def backtick(self, value: list[str]) -> None:
        start = self.i
        self.plain = False
        self.i += 1
        self.command_list("`")
        value.append(self.s[start : self.i])

    def braced(self) -> None:
        """``${…}`` after its ``${``: nested expansions and substitutions anywhere in it, up to its ``}``."""
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "}":
                self.i += 1
                return
            self.skip_one(c)
        self.fail("an unclosed ${")

    def skip_one(self, c: str) -> None:
        """Step over one character of ``${…}`` or ``$((…))``, reading any quoting or substitution it starts."""
        if c == "\\":
            self.i += 2
        elif c == '"':
            self.i += 1
            self.double_quoted([])
        elif c == "$":
            self.dollar([])
        elif c == "`":
            self.backtick([])
        else:
            self.i += 1

    def arithmetic(self) -> None:
        """``$((…))``; when it is not arithmetic after all (``$((a); b)``), bash reads a command substitution."""
        start = self.i
        self.i += 3
        depth = 0
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == ")" and depth == 0:
                if self.at(1) == ")":
                    self.i += 2
                    return
                self.i = start + 2
                self.command_list(")")
                return
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            self.skip_one(c)  # a parenthesis is one character like any
        self.fail("an unclosed $((")


class _Scanner(_Words):
    """Reads command lists: commands, their words and redirections, here-documents."""

    def command_list(self, closer: str | None) -> None:
        """Read commands up to the end, or up to ``closer`` (``)`` or a backtick), which is consumed."""
        self.nesting += 1
        try:
            if self.nesting > _NESTING:
                self.fail("substitutions nested too deeply")
            else:
                self._command_list(closer)
        finally:
            self.nesting -= 1

    def _command_list(self, closer: str | None) -> None:
        pending = _Pending()
        depth = 0
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in _BLANKS:
                self.i += 1
            elif c == "\\" and self.at(1) == "\n":
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end  # pragma: no mutate (found after the '#' at i: never 0)
            elif c == "\n":
                self.finish(pending)
                self.i += 1
                self.read_heredocs()
            elif closer == "`" and c == "`":
                self.finish(pending)
                self.i += 1
                return
            elif c == ")":
                self.finish(pending)
                self.i += 1
                if depth == 0:
                    if closer == ")":
                        return
                    self.fail("a ')' that closes nothing")
                depth -= 1
                self.plain = False
            elif c == "(":
                self.finish(pending)
                self.i += 1
                depth += 1
                self.plain = False  # pragma: no mutate (its ')' or an unclosed '(' follows: not plain either way)
            elif (c in "<>" and self.at(1) != "(") or s.startswith("&>", self.i):
                self.redirect(pending)
            elif c in ";&|":
                op = next(o for o in _OPERATORS if s.startswith(o, self.i))
                self.finish(pending)
                self.i += len(op)
                if op.startswith(";;") or op == ";&":
                    self.plain = False
            elif (fd := _FD.match(s, self.i)) is not None and s[fd.end() : fd.end() + 2] not in ("<(", ">("):
                self.command(pending)  # the command starts at the descriptor (``2>/dev/null git status``)
                self.i = fd.end()
                self.redirect(pending)
            else:
                self.word(pending, closer)
        self.finish(pending)
        if closer is not None:
            self.fail(f"an unclosed {'$(' if closer == ')' else '`'}")
        elif depth:
            self.fail("an unclosed '('")

    def command(self, pending: _Pending) -> Command:
        if pending.command is None:
            pending.command = Command(start=self.i, end=self.i)
        return pending.command

    def finish(self, pending: _Pending) -> None:
        if pending.command is not None and (pending.command.words or pending.command.redirects):
            self.commands.append(pending.command)
        pending.command = None
        pending.command_position = True
        pending.skip_name = False  # pragma: no mutate (only its truth is read: None is as false)

    def word(self, pending: _Pending, closer: str | None) -> None:
        start = self.i
        word = self.read_word(closer)
        if pending.command is None:
            pending.command = Command(start=start, end=self.i)
        else:
            pending.command.end = self.i
        if pending.skip_name:
            pending.skip_name = False  # pragma: no mutate (only its truth is read: None is as false)
        elif pending.command_position and word.raw in _RESERVED:
            self.plain = False
            pending.skip_name = word.raw == "function"
        else:
            pending.command.words.append(word)
            pending.command_position = pending.command_position and is_assignment(word.raw)

    def redirect(self, pending: _Pending) -> None:
        command = self.command(pending)
        op = next(o for o in _REDIRECTS if self.s.startswith(o, self.i))
        self.i += len(op)
        while self.at() in _BLANKS and self.at():
            self.i += 1
        if not self.at() or self.at() in "\n;&|()<>":
            self.fail(f"a redirection {op!r} without a target")
            return
        target = self.read_word(None)
        command.redirects.append(Redirect(op, target))
        command.end = self.i
        if op in ("<<", "<<-"):
            quoted = any(q in target.raw for q in "'\"\\")
            self.heredocs.append((target.value, op == "<<-", not quoted))

    def read_heredocs(self) -> None:
        pending, self.heredocs = self.heredocs, []
        for delimiter, strip_tabs, expands in pending:
            start = self.i
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end  # pragma: no mutate (a body starts after a newline: never 0)
                line = self.s[self.i : end]
                self.i = min(end + 1, len(self.s))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body_end = end - len(line)
                    break
            else:
                body_end = len(self.s)
            if expands:
                after = self.i
                self.expansions(start, body_end)
                self.i = len(self.s) if self.problem else after

    def expansions(self, start: int, end: int) -> None:
        """Scan ``start:end`` as a here-document body: only ``$`` and backticks mean anything."""
        saved, self.s, self.i = self.s, self.s[:end], start
        while self.i < end:
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "$":
                self.dollar([])
            elif c == "`":
                self.backtick([])
            else:
                self.i += 1
        self.s = saved


def is_assignment(word: str) -> bool:
    """``NAME=value`` (or ``NAME+=``, ``NAME[i]=``) before a command."""
    return _ASSIGNMENT.match(word) is not None


def scan(command: str) -> Line:
    scanner = _Scanner(command)
    if "\x00" in command:
        scanner.fail("a NUL byte")
    else:
        scanner.command_list(None)
        scanner.read_heredocs()
    commands = sorted(scanner.commands, key=lambda c: c.start)
    return Line(command, commands, scanner.plain and scanner.problem is None, scanner.problem)
