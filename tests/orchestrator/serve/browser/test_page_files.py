"""The dashboard's files as shipped (no browser needed): they are package data, they load nothing from elsewhere, and
the script has no way to turn text into markup."""

from __future__ import annotations

import re
from importlib.resources import files

STATIC = files("orchestrator.serve") / "static"
NAMES = ("index.html", "app.css", "app.js")
SVG_NS = "http://www.w3.org/2000/svg"


def _text(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def test_the_page_files_are_package_data() -> None:
    for name in NAMES:
        assert (STATIC / name).is_file(), name


def test_nothing_is_fetched_from_another_site() -> None:
    for name in NAMES:
        text = _text(name).replace(SVG_NS, "")  # an XML namespace name, never fetched
        assert not re.search(r"\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.IGNORECASE), name
        assert "@import" not in text and "url(http" not in text, name


def test_the_script_never_parses_text_as_markup() -> None:
    script = _text("app.js")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc"):
        assert sink not in script, sink
    assert "javascript:" not in script


def test_the_page_loads_its_own_files_with_the_token_in_a_header() -> None:
    page = _text("index.html")
    # nothing is loaded by URL (a <script src> or <link href> could not carry the token): one small script fetches
    # the page's style and script from this service with the Authorization header
    assert re.findall(r'(?:src|href)="([^"]*)"', page) == ["data:,"]
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.DOTALL)
    assert len(scripts) == 1
    assert "'/static/app.css'" in scripts[0] and "'/static/app.js'" in scripts[0]
    assert "Authorization: 'Bearer ' + token" in scripts[0]
    assert "<style" not in page and " style=" not in page
    assert not re.search(r"<[^>]*\son[a-z]+=", page)  # no inline event handlers
