"""RL bridges against PettingZoo's own envs: steps per second of a learner's loop, side by side.

For each game, PettingZoo's own env (as its tutorials make it: ``connect_four_v3.env()``,
``tictactoe_v3.env()``, Shimmy's ``OpenSpielCompatibilityV0`` of OpenSpiel's ``leduc_poker``,
``pistonball_v6.parallel_env``) and lang_pz's bridge of the same game (``to_masked_aec_env`` /
``to_vector_env``, each ``observation=`` kind) play the same loop a learner runs: read the
observation and the mask (``last()``; for Pistonball the parallel ``step`` return), choose a
random legal index with a seeded generator, step. The masked bridge indexes moves in the game's
own numbering, so with the same seeds both sides play the very same games (checked: the same
returns). Timing: the process's CPU time (``time.process_time``: other programs on a shared
machine do not count), rounds interleaved (native then bridges, then the other order ...), the
median of the rounds; the ratio is native steps/s / bridge steps/s (1.0 = as fast, 1.5 = the
bridge takes 1.5x the time).

    python benchmarks/bench_bridges.py [--rounds 3] [--steps 3000] [--out benchmarks/results/bench_bridges.md]
    python benchmarks/bench_bridges.py --profile connect_four:raw     # cProfile of one bridge's loop
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one

import lang_pz
from lang_pz.interop import to_masked_aec_env, to_vector_env


def aec_loop(env: Any, steps: int) -> tuple[int, float]:
    """Agent steps played (at least ``steps``, whole games) and the sum of every reward."""
    rng = np.random.default_rng(0)
    played, total, episode = 0, 0.0, 0
    while played < steps:
        env.reset(seed=episode)
        episode += 1
        for _agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            total += float(reward)
            if term or trunc:
                action = None
            else:
                mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
                action = int(rng.choice(np.flatnonzero(mask)))
            env.step(action)
            played += 1
    return played, total


def parallel_loop(env: Any, steps: int) -> tuple[int, float]:
    rng = np.random.default_rng(0)
    played, total, episode = 0, 0.0, 0
    while played < steps:
        env.reset(seed=episode)
        episode += 1
        while env.agents:
            actions = {a: int(rng.integers(3)) for a in env.agents}
            _, rewards, _, _, _ = env.step(actions)
            total += float(sum(rewards.values()))
            played += len(actions)
    return played, total


def _leduc() -> Any:
    from shimmy import OpenSpielCompatibilityV0

    # Shimmy's own env; lang_pz's samples chance nodes with the env's seeded generator (Shimmy's
    # ignores the seed there), so the two sides deal different cards: 'same games' is no here.
    return OpenSpielCompatibilityV0(game_name="leduc_poker")


def games() -> dict[str, tuple[Callable[[], Any], Callable[..., Any], Callable[[Any, int], tuple[int, float]], int]]:
    """name -> (PettingZoo's env, lang_pz bridge of it given observation=, loop, steps at --scale 1)."""
    from pettingzoo.butterfly import pistonball_v6
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    out: dict[str, Any] = {
        "connect_four": (
            connect_four_v3.env,
            lambda kind: to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation=kind),
            aec_loop,
            3000,
        ),
        "tictactoe": (
            tictactoe_v3.env,
            lambda kind: to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), observation=kind),
            aec_loop,
            3000,
        ),
    }
    if importlib.util.find_spec("pyspiel") and importlib.util.find_spec("shimmy"):
        out["leduc_poker"] = (
            _leduc,
            lambda kind: to_masked_aec_env(lang_pz.make("openspiel/leduc_poker-v0"), observation=kind),
            aec_loop,
            3000,
        )
        # the bridge's own cost: PettingZoo's env replaced by the game the language env wraps
        # (Shimmy's, with lang_pz's seeded chance nodes), so both sides play the same games
        out["leduc_poker (inner game)"] = (
            lambda: lang_pz.make("openspiel/leduc_poker-v0").env,
            lambda kind: to_masked_aec_env(lang_pz.make("openspiel/leduc_poker-v0"), observation=kind),
            aec_loop,
            3000,
        )
    out["pistonball_20"] = (
        lambda: pistonball_v6.parallel_env(n_pistons=20, continuous=False),
        lambda kind: to_vector_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=20), observation=kind),
        parallel_loop,
        1000,
    )
    return out


KINDS = ("raw", "vector", "text")


def measure(rounds: int, scale: float) -> list[dict[str, Any]]:
    rows = []
    for name, (native, bridge, loop, steps) in games().items():
        n = max(1, int(steps * scale))
        envs = {"native": native(), **{kind: bridge(kind) for kind in KINDS}}
        totals = {side: loop(env, n)[1] for side, env in envs.items()}  # untimed warm-up, and the check
        rates: dict[str, list[float]] = {side: [] for side in envs}
        order = list(envs)
        for r in range(rounds):
            for side in order if r % 2 == 0 else order[::-1]:
                t0 = time.process_time()
                played, _ = loop(envs[side], n)
                rates[side].append(played / (time.process_time() - t0))
        native_rate = statistics.median(rates["native"])
        for kind in KINDS:
            ratios = [a / b for a, b in zip(rates["native"], rates[kind])]
            rows.append(
                {
                    "game": name,
                    "bridge": kind,
                    "native": native_rate,
                    "rate": statistics.median(rates[kind]),
                    "ratio": statistics.median(ratios),
                    "same_games": abs(totals[kind] - totals["native"]) < 1e-6,
                }
            )
            print(
                f"{name:26s} {kind:7s} native {native_rate:8.0f}/s bridge {rows[-1]['rate']:8.0f}/s ratio {rows[-1]['ratio']:.2f}"
            )
    return rows


def table(rows: list[dict[str, Any]], rounds: int, scale: float) -> str:
    lines = [
        "# RL bridges against PettingZoo's own envs",
        "",
        f"`python benchmarks/bench_bridges.py --rounds {rounds} --scale {scale}` (CPU time, rounds interleaved, "
        "median; ratio = native / bridge steps per second, median of the rounds' ratios; 'same games': both "
        "sides' rewards summed over the script are equal, so they played the same games).",
        "",
        "| game | bridge observation | PettingZoo steps/s | bridge steps/s | ratio | same games |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['game']} | {r['bridge']} | {r['native']:,.0f} | {r['rate']:,.0f} | {r['ratio']:.2f} | {'yes' if r['same_games'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def profile(spec: str, scale: float) -> None:
    name, _, kind = spec.rpartition(":") if spec.count(":") else (spec, "", "raw")
    native, bridge, loop, steps = games()[name]
    env = native() if kind == "native" else bridge(kind or "raw")
    prof = cProfile.Profile()
    prof.runcall(loop, env, max(1, int(steps * scale)))
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies each game's agent steps per round")
    ap.add_argument("--out", type=Path, default=None, help="write the Markdown table here")
    ap.add_argument("--profile", default=None, help="GAME:KIND (KIND raw, vector, text or native): cProfile one loop")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.profile:
        profile(args.profile, args.scale)
        return
    rows = measure(args.rounds, args.scale)
    text = table(rows, args.rounds, args.scale)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
