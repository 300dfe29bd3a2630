"""What a simple command runs, as deny and ask rules see it: every form of it, wrappers taken off.

``FOO=1 /bin/rm -rf x`` is ``rm -rf x``; ``command rm``, ``env -i rm``, ``exec``, ``nice -n 5``, ``timeout 5``,
``nohup``, ``sudo -u u``, ``chroot --userspec u:g /srv``, ``xargs -0 rm``, ``find . -exec rm {} ;`` and ``stdbuf -oL``
run the command after them; ``sh -c 'rm x'``, ``bash -lc …`` and ``eval 'rm x'`` run a command line, read here like any
other. Quotes and backslashes are already gone (``c''url``, ``\\rm``). This finds what a command says it runs, not
everything it could run (a script file, a variable's value): deny rules are a convenience, the sandbox is the boundary.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from itertools import takewhile

from sessions.permissions.shell import is_assignment, scan

_DEPTH = 8
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_SHELL_LONG_TAKES = frozenset({"--rcfile", "--init-file"})
_EXEC_FLAGS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_WRAPPERS: dict[str, frozenset[str]] = {
    # wrapper -> its options that take the next word as their argument
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "setsid": frozenset(),
    "chroot": frozenset({"--userspec", "--groups"}),
    "unbuffer": frozenset(),
    "xargs": frozenset(
        {"-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs"}
    ),
}
_POSITIONAL = {name: 0 for name in _WRAPPERS} | {"timeout": 1, "chroot": 1}
"""Each wrapper's words between its options and its command (``timeout 5 rm``)."""


def forms(words: Sequence[str], depth: int = 0) -> Iterator[list[str]]:
    """Each command ``words`` runs, first word reduced to its base name: itself, then what its wrappers run."""
    rest = list(words)
    while rest and is_assignment(rest[0]):
        rest.pop(0)
    if not rest:
        return
    if depth > _DEPTH:  # wrapped too deeply to follow: every word may start a command
        for start, word in enumerate(rest):
            yield [posixpath.basename(word) or word, *rest[start + 1 :]]
        return
    head = posixpath.basename(rest[0]) or rest[0]
    args = rest[1:]
    yield [head, *args]
    if head in _WRAPPERS:
        if head == "command" and any(a.startswith("-") and ("v" in a or "V" in a) for a in args[:1]):
            return  # ``command -v rm`` only looks it up
        inner = _after_options(head, args)
        yield from forms(inner or (["echo"] if head == "xargs" else []), depth + 1)
    elif head in _SHELLS:
        script = _dash_c(args[1:] if head == "busybox" and args[:1] == ["sh"] else args)
        if script is not None:
            yield from line_forms(script, depth + 1)
    elif head == "eval":
        yield from line_forms(" ".join(args), depth + 1)
    elif head == "find":
        for index, arg in enumerate(args):
            if arg in _EXEC_FLAGS:
                yield from forms(list(takewhile(lambda a: a not in (";", "+"), args[index + 1 :])), depth + 1)


def line_forms(line: str, depth: int = 0) -> Iterator[list[str]]:
    """The forms of every simple command in a command line (``sh -c`` / ``eval`` strings)."""
    for command in scan(line).commands:
        yield from forms([w.value for w in command.words], depth)


def _after_options(head: str, args: list[str]) -> list[str]:
    takes = _WRAPPERS[head]
    rest = list(args)
    split: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        if option.startswith("--"):
            name, equals, argument = option.partition("=")
        else:
            name, argument = _short(option, takes)
            equals = argument
        if name in takes and not equals and rest:
            argument = rest.pop(0)
        if name in ("-S", "--split-string"):
            split = [w.value for c in scan(argument).commands for w in c.words]
    if head == "env":
        while rest and (rest[0] == "-" or is_assignment(rest[0])):
            rest.pop(0)
    rest = split + rest
    return rest[_POSITIONAL[head] :]


def _short(option: str, takes: frozenset[str]) -> tuple[str, str]:
    """A group of short options (``-Eu``, ``-uroot``, ``-iS'rm x'``): the one taking an argument, and what is attached
    after it (the argument, or "" when it is the next word); ("", "") when none takes one."""
    for index, letter in enumerate(option[1:], start=2):
        if "-" + letter in takes:
            return "-" + letter, option[index:]
    return "", ""  # pragma: no mutate (neither is read when no letter takes an argument: the name is in no set)


def _dash_c(args: list[str]) -> str | None:
    """The command string of ``sh -c STRING``, or None: the first word after the options when one of them is ``-c``.

    ``-c`` may be grouped (``-lc``, ``-ec``) or followed by more options (``-c -e``); ``-o``/``-O`` (``+o``, ``+O``)
    and ``--rcfile``/``--init-file`` take the next word; ``--`` or ``-`` ends the options."""
    rest = list(args)
    dash_c = False  # pragma: no mutate (only its truth is read: None is as false)
    while rest and rest[0][:1] in ("-", "+"):
        option = rest.pop(0)
        if option in ("--", "-"):
            break
        if option.startswith("--"):
            takes = 1 if option in _SHELL_LONG_TAKES else 0
        else:
            dash_c = dash_c or "c" in option[1:]
            takes = option.count("o") + option.count("O")
        del rest[:takes]
    return rest[0] if dash_c and rest else None
