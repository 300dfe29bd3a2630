"""HTML to readable text for ``web_fetch``: headings as ``#``, links as ``[text](href)``, list items as ``-``, ``pre``
as fenced blocks; scripts, styles and navigation chrome dropped. Standard library only (``html.parser``)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "iframe"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "table", "tr", "br", "hr", "blockquote", "dl"})
_HEADINGS = {f"h{i}": "#" * i for i in range(1, 7)}


class _Text(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.skipping = 0
        self.pre = 0
        self.href: str | None = None
        self.link_text: list[str] = []
        self.title: list[str] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skipping += 1
            return
        if self.skipping:
            return
        if tag in _HEADINGS:
            self.out.append("\n\n" + _HEADINGS[tag] + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "pre":
            self.pre += 1
            self.out.append("\n\n```\n")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.href = urljoin(self.base_url, href) if href and not href.startswith("#") else None
            self.link_text = []
        elif tag in _BLOCK or tag in ("ul", "ol"):
            self.out.append("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping:
            return
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n\n")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag == "a" and self.href is not None:
            text = " ".join("".join(self.link_text).split())
            if text:
                self.out.append(f"]({self.href})")
            self.href = None
        elif tag in _HEADINGS or tag in _BLOCK:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skipping:
            return
        if self.pre:
            self.out.append(data)
            return
        text = re.sub(r"\s+", " ", data)
        if self.href is not None:
            if not self.link_text and text.strip():
                self.out.append("[")
            self.link_text.append(text)
        self.out.append(text)


def html_to_text(html: str, base_url: str) -> str:
    """The readable text of an HTML page, with its title first."""
    parser = _Text(base_url)
    parser.feed(html)
    parser.close()
    body = "".join(parser.out)
    lines = [line.rstrip() for line in body.splitlines()]
    text = re.sub(
        r"\n{3,}", "\n\n", "\n".join(line.lstrip() if not line.startswith("    ") else line for line in lines)
    )
    title = " ".join("".join(parser.title).split())
    return (f"# {title}\n\n" if title and f"# {title}" not in text[:200] else "") + text.strip()
