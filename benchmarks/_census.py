"""The result writer of the game census scripts (``openspiel_games.py``, ``textarena_games.py``):
one JSON summary and one Markdown table per census, in the same shape.

``OUT.json``: ``{**head, "games", "passed", "cycles", "wall_seconds", "rows"}``; ``OUT.md``: a
title with the pass count, the command line that made it, and one table row per game.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: A table column: its header and the cell of a row.
Column = tuple[str, Callable[[Mapping[str, Any]], object]]


def census_summary(rows: Sequence[Mapping[str, Any]], cycles: int, wall_seconds: float, **head: Any) -> dict[str, Any]:
    """The JSON summary: ``head`` first (e.g. a library version), then the counts and the rows."""
    return {
        **head,
        "games": len(rows),
        "passed": sum(bool(r["passed"]) for r in rows),
        "cycles": cycles,
        "wall_seconds": round(wall_seconds, 1),
        "rows": list(rows),
    }


def reason_cell(row: Mapping[str, Any]) -> str:
    """A row's failure reason, safe in a Markdown table cell."""
    return str(row["reason"]).replace("|", "/")


def census_markdown(summary: Mapping[str, Any], title: str, intro: str, columns: Sequence[Column]) -> str:
    """``# TITLE: P of N pass language_api_test``, ``intro``, then the table (``game`` and
    ``result`` first, then ``columns``)."""
    cols: list[Column] = [("game", lambda r: r["game"]), ("result", lambda r: "pass" if r["passed"] else "fail"), *columns]
    lines = [
        f"# {title}: {summary['passed']} of {summary['games']} pass language_api_test",
        "",
        intro,
        "",
        "| " + " | ".join(h for h, _ in cols) + " |",
        "| " + " | ".join("---" for _ in cols) + " |",
    ]
    lines += ["| " + " | ".join(str(cell(r)) for _, cell in cols) + " |" for r in summary["rows"]]
    return "\n".join(lines) + "\n"


def write_census(out: Path, summary: Mapping[str, Any], title: str, intro: str, columns: Sequence[Column]) -> None:
    """Write ``OUT.json`` (``summary``) and ``OUT.md`` (:func:`census_markdown`); folders are created."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(census_markdown(summary, title, intro, columns), encoding="utf-8")
