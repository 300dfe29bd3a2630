"""DESIGN §8's exception tree is the code's: each line's class exists with that base and in that file, and every
public exception class of ours stands in the tree. Adding, moving or re-basing an error class fails here until DESIGN
says so."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("sessions", "plans", "scenarios", "orchestrator")
DESIGN = ROOT / "docs" / "DESIGN.md"
_LINE = re.compile(r"^(?P<lead>[ │├└─]*)(?P<label>\([^)]*\)|[A-Za-z_][\w.]*)(?P<rest>.*)$")
_PATH = re.compile(r"\b((?:[a-z_]+/)+[a-z_]+\.py)\b")

Entry = tuple[str | None, str]
"""A class's nearest public base of ours (``None``: it derives only from Python's own) and the file defining it."""


def design_tree() -> dict[str, Entry]:
    """The classes of §8's tree. Column 0 names a package (and maybe a default file for its roots); a class stands at
    column ``2 + 4 * depth``; a ``(group)`` line is a private base, so its children's base is the group's parent."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text[text.index("## 8. Errors") : text.index("## 9. ")]
    block = section[section.index("```text\n") + 8 : section.index("```\n", section.index("```text\n") + 8)]
    tree: dict[str, Entry] = {}
    default: str | None = None
    stack: list[tuple[str | None, str | None]] = []  # (class name or None for a group, file) per depth
    for line in block.splitlines():
        if not line.strip():
            continue
        match = _LINE.match(line)
        assert match, f"DESIGN §8: a tree line that does not parse: {line!r}"
        lead, label, rest = match["lead"], match["label"], match["rest"]
        path = next(iter(_PATH.findall(rest)), None)
        if not lead:
            default, stack = path, []
            continue
        depth = (len(lead) - 2) // 4
        assert len(lead) == 2 + 4 * depth, f"DESIGN §8: {label} is not at a tree column"
        parent = stack[depth - 1] if depth else (None, default)
        base = next((name for name, _ in reversed(stack[:depth]) if name is not None), None)
        module = path or parent[1]
        del stack[depth:]
        if label.startswith("("):
            stack.append((None, module))
            continue
        assert module is not None, f"DESIGN §8: {label} names no file, and neither does its parent"
        assert label not in tree, f"DESIGN §8: {label} stands twice"
        tree[label] = (base, module)
        stack.append((label, module))
    return tree


def _modules() -> list[str]:
    names = []
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__" or any(p.startswith("_") and p != "__init__" for p in parts):
                continue  # an entry point, or private scripts (the scenario builders)
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _file(module: str) -> str:
    path = Path(*module.split("."))
    return str(path / "__init__.py") if (ROOT / path).is_dir() else str(path.with_suffix(".py"))


def code_tree() -> dict[str, Entry]:
    """Every public exception class defined in our packages, with its nearest public base of ours and its file."""
    found: list[tuple[str, Entry]] = []
    for name in _modules():
        module = importlib.import_module(name)
        for cls_name, cls in vars(module).items():
            if not (inspect.isclass(cls) and issubclass(cls, BaseException)) or cls.__module__ != name:
                continue
            if cls_name.startswith("_"):
                continue
            base = next(
                (b.__name__ for b in cls.__mro__[1:] if b.__module__.split(".")[0] in OURS and b.__name__[0] != "_"),
                None,
            )
            found.append((cls_name, (base, _file(name))))
    names = [n for n, _ in found]
    assert len(names) == len(set(names)), (
        f"two exception classes share a name: {sorted(n for n in names if names.count(n) > 1)}"
    )
    return dict(found)


def test_design_tree_parses_into_the_classes_it_draws() -> None:
    tree = design_tree()
    assert tree["DeepSeekError"] == (None, "sessions/wire/errors.py")
    assert tree["StallTimeoutError"] == ("DeepSeekError", "sessions/wire/errors.py")  # under the (retryable) group
    assert tree["EditMismatchError"] == ("ToolInputError", "sessions/tools/errors.py")
    assert tree["NothingToUndoError"] == ("CheckpointError", "orchestrator/checkpoints/undo.py")


def test_design_exception_tree_matches_the_code() -> None:
    design, code = design_tree(), code_tree()
    missing = sorted(set(code) - set(design))
    gone = sorted(set(design) - set(code))
    wrong = {n: {"design": design[n], "code": code[n]} for n in sorted(set(design) & set(code)) if design[n] != code[n]}
    assert (missing, gone, wrong) == ([], [], {}), (
        "DESIGN §8 and the code disagree: missing from DESIGN, in DESIGN but not in the code, base or file differs"
    )
