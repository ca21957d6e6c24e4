"""Assemble ``benchmarks/results/envs_bench/envs_bench.md`` from the bench tables of
``benchmarks/envs_bench.sh`` (``<name>.md``, ``<name>.wall.txt``, ``<name>/episodes.jsonl``), the
hand-written ``findings.md`` and the observation examples (``examples.md``, from
``benchmarks/envs_examples.py``)::

    .venv/bin/python benchmarks/envs_bench_report.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: (section title, [(table name, what it is)]) in the order shown.
SECTIONS: list[tuple[str, list[tuple[str, str]]]] = [
    ("Hanabi, 2 players (openspiel/hanabi-v0)", [("hanabi", "LLM team"), ("hanabi_classical", "classical")]),
    ("Leduc poker (openspiel/leduc_poker-v0)", [("leduc", "LLM seat"), ("leduc_classical", "classical")]),
    (
        "simple_spread (mpe/simple_spread-v0)",
        [
            ("spread", "LLM team, max_cycles=3"),
            ("spread3_classical", "classical, max_cycles=3"),
            ("spread_classical", "classical, max_cycles=10"),
        ],
    ),
    ("TextArena tic-tac-toe (textarena/tictactoe-v0)", [("tictactoe", "LLM seat"), ("tictactoe_classical", "classical")]),
    ("TextArena Kuhn poker (textarena/kuhn_poker-v0)", [("kuhn_ta", "LLM seat"), ("kuhn_ta_classical", "classical")]),
    ("MCTS on a board game (openspiel/tic_tac_toe)", [("mcts", "LLM seat"), ("mcts_classical", "classical")]),
]


def episode_seconds(folder: Path) -> tuple[int, float]:
    """(episodes, summed episode seconds) of a results folder's ``episodes.jsonl`` ((0, 0) if none)."""
    path = folder / "episodes.jsonl"
    if not path.is_file():
        return 0, 0.0
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return len(rows), sum(float(r.get("seconds", 0.0)) for r in rows)


def table_block(out: Path, name: str, what: str) -> str:
    """One table with its command, wall time, date and load average (module docstring)."""
    table = out / f"{name}.md"
    wall = out / f"{name}.wall.txt"
    if not table.is_file() or not table.read_text().strip():
        return f"**{what}** (`{name}`): not run yet (`bash benchmarks/envs_bench.sh {name}`).\n"
    n, seconds = episode_seconds(out / name)
    lines = [f"**{what}** (`bash benchmarks/envs_bench.sh {name}`):", "", table.read_text().strip(), ""]
    if wall.is_file():
        lines.append(f"Wall time of the last run: {wall.read_text().strip()}")
    lines.append(f"Episodes in `{name}/episodes.jsonl`: {n}, their seconds summed: {seconds:.0f} s.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Write ``envs_bench.md`` (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/envs_bench"), help="results folder")
    args = parser.parse_args(argv)
    out: Path = args.out
    parts = [(out / "findings.md").read_text().strip() + "\n"] if (out / "findings.md").is_file() else []
    for title, tables in SECTIONS:
        parts.append(f"## {title}\n")
        parts.extend(table_block(out, name, what) for name, what in tables)
    if (out / "replies.md").is_file():
        parts.append(
            "## The LLM seats' replies (`benchmarks/envs_bench_replies.py`: every LLM episode replayed from the "
            "response cache; a fallen-back reply played the env's fallback move)\n"
        )
        parts.append((out / "replies.md").read_text().strip() + "\n")
    if (out / "examples.md").is_file():
        text = (out / "examples.md").read_text().strip()
        parts.append("\n".join("#" + line if line.startswith("#") else line for line in text.splitlines()) + "\n")
    (out / "envs_bench.md").write_text("\n".join(parts))
    print(f"written: {out / 'envs_bench.md'}")


if __name__ == "__main__":
    main()
