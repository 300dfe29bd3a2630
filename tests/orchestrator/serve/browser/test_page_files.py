"""The dashboard's files as shipped (no browser needed): they are package data, they load nothing from elsewhere, the
script modules have no way to turn text into markup, every import names a module that is there (the loader follows
them, so the graph must have no cycle), and each module stays small."""

from __future__ import annotations

import re
from importlib.resources import files
from importlib.resources.abc import Traversable

STATIC = files("orchestrator.serve") / "static"
MODULES = STATIC / "js"
SVG_NS = "http://www.w3.org/2000/svg"
IMPORT = re.compile(r"(?:\bfrom\s*|\bimport\s*)'\./([a-z_]+\.js)'")
ANY_IMPORT = re.compile(r"^\s*import\b.*$|\bimport\(", re.MULTILINE)
MODULE_LINES = 250


def _modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in MODULES.iterdir() if p.name.endswith(".js")}


def _files() -> list[Traversable]:
    return [STATIC / "index.html", STATIC / "app.css", *(p for p in MODULES.iterdir() if p.name.endswith(".js"))]


def test_the_page_files_are_package_data() -> None:
    assert (STATIC / "index.html").is_file() and (STATIC / "app.css").is_file()
    assert "app.js" in _modules() and len(_modules()) >= 8


def test_nothing_is_fetched_from_another_site() -> None:
    for path in _files():
        text = path.read_text(encoding="utf-8").replace(SVG_NS, "")  # an XML namespace name, never fetched
        assert not re.search(r"\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.IGNORECASE), path.name
        assert "@import" not in text and "url(http" not in text, path.name


def test_the_script_never_parses_text_as_markup() -> None:
    for name, script in _modules().items():
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in script, (name, sink)
        assert "srcdoc" not in script and "javascript:" not in script, name


def test_every_import_is_a_sibling_module_and_the_graph_has_no_cycle() -> None:
    modules = _modules()
    graph: dict[str, list[str]] = {}
    for name, text in modules.items():
        imports = [line for line in ANY_IMPORT.findall(text)]
        graph[name] = IMPORT.findall(text)
        # the loader rewrites only './name.js' specifiers: any other import would be fetched without the token
        assert len(imports) == len(graph[name]), (name, imports)
        for dep in graph[name]:
            assert dep in modules, (name, dep)
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))} (the loader would wait forever)"
        if name not in done:
            for dep in graph[name]:
                visit(dep, (*path, name))
            done.add(name)

    visit("app.js", ())
    assert done == set(modules), f"modules app.js never loads: {sorted(set(modules) - done)}"


def test_each_module_is_small() -> None:
    for name, text in _modules().items():
        assert text.count("\n") <= MODULE_LINES, (name, text.count("\n"))


def test_the_page_loads_its_own_files_with_the_token_in_a_header() -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    # nothing is loaded by URL (a <script src>, a <link href> or a module's import could not carry the token): one
    # small script fetches the page's style and its modules from this service with the Authorization header
    assert re.findall(r'(?:src|href)="([^"]*)"', page) == ["data:,"]
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.DOTALL)
    assert len(scripts) == 1
    assert "'/static/app.css'" in scripts[0] and "'/static/js/' + name" in scripts[0] and "load('app.js')" in scripts[0]
    assert "Authorization: 'Bearer ' + token" in scripts[0]
    assert "<style" not in page and " style=" not in page
    assert not re.search(r"<[^>]*\son[a-z]+=", page)  # no inline event handlers
