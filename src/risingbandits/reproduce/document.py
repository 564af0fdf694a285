"""A small document model rendered both as Markdown and as a self-contained HTML page.

Blocks are headings, paragraphs, bullet lists, tables, figures and code. Inline text may use
``code`` and **bold** (the Markdown spelling); the HTML renderer escapes everything else. In
HTML every figure is embedded as a base64 ``data:`` URI, so the page needs no other file.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class Figure:
    path: Path
    """The PNG file; the Markdown links it relative to the report's folder."""
    caption: str


@dataclass(frozen=True)
class Code:
    text: str


Block = Heading | Para | Bullets | Table | Figure | Code

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: Sequence[Block], base: Path) -> str:
    """The document as Markdown; figure links are relative to ``base``."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {item}" for item in b.items))
        elif isinstance(b, Table):
            lines = [
                "| " + " | ".join(_md_cell(h) for h in b.header) + " |",
                "|" + "---|" * len(b.header),
                *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows),
            ]
            if b.caption:
                lines.insert(0, f"*{b.caption}*\n")
            out.append("\n".join(lines))
        elif isinstance(b, Figure):
            rel = b.path.relative_to(base).as_posix()
            out.append(f"![{b.caption}]({rel})\n\n*{b.caption}*")
        else:
            out.append("```\n" + b.text.rstrip("\n") + "\n```")
    return "\n\n".join(out) + "\n"


def inline_html(text: str) -> str:
    """Escaped text with ``code`` and **bold** turned into tags."""
    parts, last = [], 0
    for m in _INLINE.finditer(text):
        parts.append(html.escape(text[last : m.start()]))
        if m.group(1) is not None:
            parts.append(f"<code>{html.escape(m.group(1))}</code>")
        else:
            parts.append(f"<strong>{html.escape(m.group(2))}</strong>")
        last = m.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1180px; margin: 2em auto; padding: 0 1em;
       line-height: 1.45; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.86em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f2f2f2; }
figure { margin: 1em 0; }
figure img { max-width: 100%; }
figcaption, .caption { font-style: italic; font-size: 0.9em; }
code, pre { background: #f6f6f6; }
pre { padding: 0.6em; overflow-x: auto; }
"""


def to_html(blocks: Sequence[Block], title: str) -> str:
    """The document as one HTML page with every figure embedded."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
    ]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{inline_html(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{inline_html(b.text)}</p>")
        elif isinstance(b, Bullets):
            items = "".join(f"<li>{inline_html(i)}</li>" for i in b.items)
            out.append(f"<ul>{items}</ul>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{inline_html(h)}</th>" for h in b.header)
            body = "".join(
                "<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>"
                for row in b.rows
            )
            caption = f'<p class="caption">{inline_html(b.caption)}</p>' if b.caption else ""
            out.append(f"{caption}<table><tr>{head}</tr>{body}</table>")
        elif isinstance(b, Figure):
            out.append(
                f'<figure><img alt="{html.escape(b.caption)}" src="{data_uri(b.path)}">'
                f"<figcaption>{inline_html(b.caption)}</figcaption></figure>"
            )
        else:
            out.append(f"<pre>{html.escape(b.text)}</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
