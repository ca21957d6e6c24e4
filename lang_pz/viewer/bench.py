"""A bench results folder (``lang-pz bench``) and an ``eval-critic`` folder read into page data.

A bench folder that is still being written has ``episodes.jsonl`` but no (or an older)
``summary.json``: its rows are then summarised here from the episodes, per (env, team), with the
same bootstrap interval :mod:`lang_pz.bench.stats` computes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lang_pz.runs import read_jsonl
from lang_pz.viewer.source import read_json


def bench_view(folder: str | Path) -> dict[str, Any]:
    """The page's data for a bench folder: ``rows`` (one per env and team: mean, 95 % interval,
    usage; from ``summary.json``, or from the episodes when it is missing or older) and
    ``episodes`` (every episode record: env, team, seed, value)."""
    from lang_pz.bench.stats import summarise

    root = Path(folder)
    episodes = read_jsonl(root / "episodes.jsonl")
    summary_path, episodes_path = root / "summary.json", root / "episodes.jsonl"
    rows = read_json(summary_path)
    fresh = (
        isinstance(rows, list)
        and summary_path.is_file()
        and (not episodes_path.is_file() or summary_path.stat().st_mtime >= episodes_path.stat().st_mtime)
    )
    if not fresh:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in episodes:
            groups.setdefault((str(r.get("env")), str(r.get("team"))), []).append(r)
        rows = [
            summarise(env, team, str(recs[0].get("spec", "")), str(recs[0].get("objective", "")), recs).as_dict()
            for (env, team), recs in groups.items()
        ]
    keep = ("env", "team", "seed", "value", "objective", "team_return", "parse_failures", "steps", "seconds", "llm_calls")
    return {
        "kind": "bench",
        "title": f"bench: {root.name}",
        "source": str(root),
        "complete": fresh,
        "rows": rows,
        "episodes": [{k: r.get(k) for k in keep} for r in episodes],
    }


def critic_view(folder: str | Path) -> dict[str, Any]:
    """The page's data for an ``eval-critic`` folder: the summaries of ``summary.json``, its
    agreements with human labels (``label_agreement``, :mod:`lang_pz.evaluation.agreement`) and
    every case record of its JSONL files (file name -> records)."""
    root = Path(folder)
    summary = read_json(root / "summary.json") or {}
    cases = {p.name: read_jsonl(p) for p in sorted(root.glob("*.jsonl"))}
    return {
        "kind": "eval-critic",
        "title": f"critic evaluation: {root.name}",
        "source": str(root),
        "backend": summary.get("backend"),
        "summaries": summary.get("summaries", []),
        "label_agreement": summary.get("label_agreement", []),
        "cases": cases,
    }
