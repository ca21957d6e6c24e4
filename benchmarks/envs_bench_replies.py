"""How many of the LLM seats' replies in the envs bench were moves, and how many fell back.

Replays every LLM episode of ``benchmarks/results/envs_bench/<name>/episodes.jsonl`` (same env,
kwargs, team and seed; the embedded model's replies come from the on-disk response cache the bench
filled, so a replay costs no generation unless the cache was cleared) and counts the LLM seats'
steps whose reply did not parse (``AgentStep.parse_error``: the env's fallback move was played).
Prints a markdown table and writes ``replies.json`` beside the tables::

    .venv/bin/python benchmarks/envs_bench_replies.py hanabi leduc spread tictactoe kuhn_ta mcts
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.bench.runner import read_episodes
from lang_pz.bench.teams import build_team, parse_team
from lang_pz.rollout import rollout


def _kwargs(env_name: str) -> dict[str, Any]:
    """``mpe/simple_spread-v0(max_cycles=3)`` -> ``{"max_cycles": 3}`` (the bench's case name)."""
    if "(" not in env_name:
        return {}
    inner = env_name[env_name.index("(") + 1 : -1]
    pairs = (item.split("=", 1) for item in inner.split(", ") if item)
    return {k: json.loads(v) if v[:1].isdigit() or v in ("true", "false") else v for k, v in pairs}


def count_replies(folder: Path, backend: Any) -> dict[str, Any]:
    """{team: {"replies", "fell_back", "examples"}} over a folder's LLM episodes (module docstring)."""
    out: dict[str, Any] = {}
    for record in read_episodes(folder):
        team = parse_team(record["spec"], record["team"])
        if not team.uses_llm:
            continue
        env = lang_pz.make(record["env_id"], **_kwargs(record["env"]))
        policies = build_team(team, env, record["env_id"], lambda: backend)
        traj = rollout(env, policies, seed=int(record["seed"]))
        env.close()
        llm_seats = {a for a in env.possible_agents if team.seat(a).startswith("llm")}
        entry = out.setdefault(
            record["team"], {"episodes": 0, "replayed_differently": 0, "replies": 0, "fell_back": 0, "examples": Counter()}
        )
        entry["episodes"] += 1
        same = all(abs(traj.returns[a] - r) < 1e-6 for a, r in record["returns"].items())
        entry["replayed_differently"] += not same  # a replay that is not the bench's episode
        for step in traj.steps:
            if step.agent in llm_seats:
                entry["replies"] += 1
                entry["fell_back"] += step.parse_error is not None
                entry["examples"][step.raw_output.strip()[:60]] += 1
    for entry in out.values():
        entry["examples"] = entry["examples"].most_common(4)
    return out


def main(argv: list[str] | None = None) -> None:
    """Count and print (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="table names of benchmarks/envs_bench.sh")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/envs_bench"))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    backend = make_backend("embedded")
    result = {name: count_replies(args.out / name, backend) for name in args.names}
    (args.out / "replies.json").write_text(json.dumps(result, indent=1) + "\n")
    print("| table | team | episodes (replayed to other returns) | LLM replies | fell back (unparsed) | commonest replies |")
    print("|---|---|---|---|---|---|")
    for name, teams in result.items():
        for team, e in teams.items():
            common = "; ".join(f"`{text}` x{n}" for text, n in e["examples"])
            share = f"{e['fell_back']} ({e['fell_back'] / max(e['replies'], 1):.0%})"
            print(
                f"| {name} | {team} | {e['episodes']} ({e['replayed_differently']}) | {e['replies']} | {share} | {common} |"
            )


if __name__ == "__main__":
    main()
