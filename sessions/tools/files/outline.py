"""``read_file`` with ``outline = true``: a source file's classes and functions with their line ranges.

Python through :mod:`ast`: every top-level class and function, and the functions and classes directly inside a class,
indented; a range starts at the first decorator and ends at the node's last line (``end_lineno``). Other languages
through tree-sitter when ``tree_sitter_language_pack`` is installed (it is not a dependency); else the result says
there is no outline, so the model reads the file as usual. Deterministic text, paths relative to the workspace.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import PurePosixPath
from typing import Any

MAX_ENTRIES = 400

_TREE_SITTER_LANGUAGES = {
    ".js": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust",
    ".java": "java", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby",
}  # fmt: skip
_TREE_SITTER_KINDS = {
    "class_declaration": "class", "class_definition": "class", "class": "class", "interface_declaration": "interface",
    "function_declaration": "function", "function_definition": "function", "function_item": "fn",
    "method_definition": "method", "method_declaration": "method", "method": "def", "struct_item": "struct",
    "impl_item": "impl", "trait_item": "trait", "enum_item": "enum", "type_declaration": "type",
}  # fmt: skip


def python_outline(source: str) -> list[tuple[int, int, int, str]]:
    """``(depth, first line, last line, "class Name" | "def name")`` for every top-level class and function and
    those directly inside a class, in file order. Raises :class:`SyntaxError` for text that is not Python."""
    entries: list[tuple[int, int, int, str]] = []

    def visit(body: list[ast.stmt], depth: int) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                kind = "class" if isinstance(node, ast.ClassDef) else "async def" if isinstance(
                    node, ast.AsyncFunctionDef) else "def"  # fmt: skip
                entries.append((depth, first, node.end_lineno or node.lineno, f"{kind} {node.name}"))
                if isinstance(node, ast.ClassDef) and depth == 0:
                    visit(node.body, depth + 1)

    visit(_parse(source).body, 0)
    return entries


class _TooDeep(ValueError):
    """The source nests deeper than the parser can take (CPython reports that as RecursionError or MemoryError)."""


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (RecursionError, MemoryError):  # the parser's own bound on nesting, not memory running out: bounded input
        raise _TooDeep("nested too deeply to parse") from None


def _tree_sitter_outline(data: bytes, language: str) -> list[tuple[int, int, int, str]] | None:
    try:
        pack: Any = importlib.import_module("tree_sitter_language_pack")
        parser = pack.get_parser(language)
    except (ImportError, LookupError, AttributeError, ValueError):  # not installed, or no grammar for it
        return None
    entries: list[tuple[int, int, int, str]] = []

    def visit(node: Any, depth: int) -> None:
        for child in node.named_children:
            kind = _TREE_SITTER_KINDS.get(child.type)
            if kind is None:
                if depth == 0 and child.type in ("export_statement", "declaration_list", "class_body"):
                    visit(child, depth)
                continue
            name = child.child_by_field_name("name")
            label = name.text.decode("utf-8", errors="replace") if name is not None else "?"
            entries.append((depth, child.start_point[0] + 1, child.end_point[0] + 1, f"{kind} {label}"))
            body = child.child_by_field_name("body")
            if depth == 0 and body is not None:
                visit(body, depth + 1)

    visit(parser.parse(data).root_node, 0)
    return entries


def outline_text(data: bytes, rel: str) -> str:
    """The outline as read_file returns it: ``first-last<TAB>class Name`` per line, methods indented."""
    suffix = PurePosixPath(rel).suffix.lower()
    lines = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    if suffix in (".py", ".pyi"):
        try:
            entries: list[tuple[int, int, int, str]] | None = python_outline(data.decode("utf-8", errors="replace"))
        except _TooDeep:
            return f"No outline: {rel} nests too deeply to parse. Read it with start_line/end_line."
        except (SyntaxError, ValueError) as exc:
            where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
            return f"No outline: {rel} does not parse as Python{where}. Read it with start_line/end_line."
        language = "python"
    elif suffix in _TREE_SITTER_LANGUAGES:
        language = _TREE_SITTER_LANGUAGES[suffix]
        entries = _tree_sitter_outline(data, language)
        if entries is None:
            return f"No outline for {rel}: no parser for {language} is installed. Read it with start_line/end_line."
    else:
        return f"No outline for {rel}: outlines cover Python and, with tree-sitter, a few other languages."
    if not entries:
        return f"{rel} ({language}, {lines} lines) defines no classes or functions."
    shown = [f"{first}-{last}\t{'  ' * depth}{label}" for depth, first, last, label in entries[:MAX_ENTRIES]]
    more = [f"… {len(entries) - MAX_ENTRIES} more not listed"] if len(entries) > MAX_ENTRIES else []
    return "\n".join([f"Outline of {rel} ({language}, {lines} lines): lines, then the definition.", *shown, *more])
