"""A scripted person at the plan review's prompt, and a real editor process for the ``$EDITOR`` loop."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any


class Typist:
    """A scripted person: answers each prompt with the next line; input ends (EOFError) when the lines run out."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


EDITOR_SCRIPT = r"""
import json, pathlib, sys
here = pathlib.Path(__file__).parent
doc = pathlib.Path(sys.argv[1])
count = here / "count"
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
text = doc.read_text(encoding="utf-8")
(here / f"seen{n}.jsonc").write_text(text, encoding="utf-8")
(here / "path").write_text(str(doc))
rounds = json.loads((here / "rounds.json").read_text())
action = rounds[n - 1]
if action == "exit1":
    sys.exit(1)
if action == "empty":
    doc.write_text("", encoding="utf-8")
    sys.exit(0)
for old, new in action:
    assert old in text, (old, text)
    text = text.replace(old, new, 1)
doc.write_text(text, encoding="utf-8")
"""


def fake_editor(tmp_path: Path, *rounds: Any) -> tuple[str, Path]:
    """A real editor process: round n applies ``rounds[n-1]`` (text replacements, "empty" or "exit1")."""
    home = tmp_path / "editor"
    home.mkdir()
    (home / "edit.py").write_text(EDITOR_SCRIPT)
    (home / "rounds.json").write_text(json.dumps(list(rounds)))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(home / 'edit.py'))}", home


def opened(home: Path) -> int:
    count = home / "count"
    return int(count.read_text()) if count.exists() else 0
