"""A griffe extension for the documentation site (``mkdocs.yml``): lang_pz's docstrings are
Google-style sections with reStructuredText inside (Sphinx roles, ``::`` literal blocks, simple
tables), and mkdocstrings renders Markdown. This turns those three into their Markdown forms
when griffe loads a docstring, so the API reference reads as the source does. Only the site's
text changes; nothing in ``lang_pz`` is touched.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|envvar):`([^`]+)`")
_BORDER = re.compile(r"^(\s*)(=+)((?: +=+)+)\s*$")


def _role(match: re.Match[str]) -> str:
    target = match.group(1).strip()
    titled = re.match(r"(.+?)\s*<(.+)>$", target)
    if titled:
        return f"`{titled.group(1)}`"
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return f"`{target}`"


def _columns(border: str) -> list[tuple[int, int]]:
    """Start and end of each ``=`` run of a simple table's border line."""
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _cells(line: str, columns: list[tuple[int, int]]) -> list[str]:
    cells = []
    for i, (start, _end) in enumerate(columns):
        stop = columns[i + 1][0] if i + 1 < len(columns) else len(line)  # the last column runs to the end
        cells.append(line[start:stop].strip())
    return cells


def _table(lines: list[str], columns: list[tuple[int, int]]) -> list[str]:
    """A simple table's lines (borders included) as a Markdown table: a row whose first cell is
    empty continues the row above it; with three borders the first block is the header."""
    borders = [i for i, line in enumerate(lines) if _BORDER.match(line)]
    header: list[str] | None = None
    body = lines[borders[0] + 1 : borders[-1]]
    if len(borders) == 3:
        header = _cells(" ".join(lines[borders[0] + 1 : borders[1]]), columns)
        body = lines[borders[1] + 1 : borders[-1]]
    rows: list[list[str]] = []
    for line in body:
        if not line.strip():
            continue
        cells = _cells(line, columns)
        if rows and not cells[0]:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    indent = _BORDER.match(lines[borders[0]]).group(1)  # type: ignore[union-attr]
    head = header or [""] * len(columns)
    out = [head, ["---"] * len(columns), *rows]
    return [indent + "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in out]


def rst_to_markdown(text: str) -> str:
    """``text`` with simple tables as Markdown tables, ``::`` blocks as code blocks and Sphinx
    roles as inline code."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _BORDER.match(lines[i])
        if match:
            columns = _columns(lines[i])
            ends = [j for j in range(i + 1, len(lines)) if lines[j].rstrip() == lines[i].rstrip()]
            # the table's last border: the second (no header) or the third (a header block)
            if ends:
                last = ends[1] if len(ends) >= 2 and all(lines[k].strip() for k in range(ends[0] + 1, ends[1])) else ends[0]
                if out and out[-1].strip():
                    out.append("")
                out.extend(_table(lines[i : last + 1], columns))
                out.append("")
                i = last + 1
                continue
        line = lines[i]
        if line.rstrip().endswith("::") and not line.strip().startswith(">>>"):
            stripped = line.rstrip()[:-2].rstrip()
            out.append(stripped + (":" if stripped and not stripped.endswith(":") else ""))
        else:
            out.append(line)
        i += 1
    return _ROLE.sub(_role, "\n".join(out))


class RstToMarkdown(griffe.Extension):
    """Rewrite each docstring griffe loads (:func:`rst_to_markdown`)."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
