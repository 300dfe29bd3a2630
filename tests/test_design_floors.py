"""DESIGN §2 holds to the code where a table can be checked: each room of ``orchestrator/`` stands on one floor and
imports only rooms of lower floors, and the runtime dependencies it lists are pyproject.toml's. Moving an import,
adding a room or a dependency fails here until DESIGN says so."""

from __future__ import annotations

import re
import tomllib

from tests.support.module_graph import DESIGN, ROOT, module_graph, room_of

_ROW = re.compile(r"^\| (\d+) \| (.+?) \| ", re.MULTILINE)


def _section_2() -> str:
    text = DESIGN.read_text(encoding="utf-8")
    return text[text.index("## 2. Layout") : text.index("## 3. ")]


def floors() -> dict[str, int]:
    """Each room of the floor table (``goal`` for ``goal/``, ``build`` for ``build.py``) and its floor."""
    found: dict[str, int] = {}
    for floor, rooms in _ROW.findall(_section_2()):
        for name in re.findall(r"`([^`]+)`", rooms):
            room = name.removesuffix("/").removesuffix(".py")
            assert room not in found, f"DESIGN §2: {name} stands on two floors"
            found[room] = int(floor)
    return found


def test_every_room_stands_on_one_floor_of_the_table() -> None:
    rooms = {room_of(m) for m in module_graph() if m.startswith("orchestrator.")}
    table = floors()
    assert (sorted(rooms - table.keys()), sorted(table.keys() - rooms)) == ([], [])


def test_every_import_between_rooms_goes_down_a_floor() -> None:
    table = floors()
    wrong = sorted(
        f"{module} (floor {table[room_of(module)]}) -> {target} (floor {table[room_of(target)]})"
        for module, targets in module_graph().items()
        if module.startswith("orchestrator.")
        for target in targets
        if target.startswith("orchestrator.")
        and room_of(target) != room_of(module)
        and table.get(room_of(module), 0) <= table.get(room_of(target), 0)
    )
    assert wrong == []


def test_the_runtime_dependencies_are_pyprojects() -> None:
    listed = _section_2().split("Runtime dependencies:", 1)[1].split(". ", 1)[0]  # the sentence that names them
    named = {n.lower().replace("_", "-") for n in re.findall(r"`([^`]+)`", listed)}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    declared = {re.split(r"[<>=\[ ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in project}
    assert (sorted(declared - named), sorted(named - declared)) == ([], [])


def test_the_sessions_tree_is_the_packages() -> None:
    """The drawing of ``sessions/`` names each folder's modules (and data files), no more and no fewer."""
    section = _section_2()
    block = section[section.index("```text\nsessions/") + 8 :].split("```", 1)[0]
    drawn: dict[str, set[str]] = {}
    parents: list[str] = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip())
        first, *names = line.split()
        if first.endswith("/"):
            depth = indent // 2
            parents[depth:] = [first]
            folder = "".join(parents)
        else:
            names = [first, *names]
        drawn.setdefault(folder, set()).update(names)
    on_disk = {
        f"{d.relative_to(ROOT)}/": {p.name for p in d.iterdir() if p.suffix in {".py", ".json"}} - {"__init__.py"}
        for d in [ROOT / "sessions", *(ROOT / "sessions").rglob("*")]
        if d.is_dir() and d.name != "__pycache__"
    }
    assert drawn == on_disk
