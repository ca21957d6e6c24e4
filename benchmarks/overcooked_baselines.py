"""Soups delivered by scripted Overcooked teams, per layout: greedy+greedy and random+random.

Plays ``--seeds`` episodes of ``--horizon`` ticks on every registered Overcooked layout, at
both action levels, with overcooked_ai's greedy planning agent
(:class:`lang_pz.policies.overcooked.OvercookedGreedyPolicy`) on both sides and with uniformly
random players (:class:`lang_pz.policies.RandomPolicy`), through the language environment, and
prints the mean (and min-max) soups delivered.

    python benchmarks/overcooked_baselines.py [--seeds 5] [--horizon 400] [--actions primitive macro]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one

import lang_pz
from lang_pz.envs.overcooked import LAYOUTS
from lang_pz.policies.overcooked import overcooked_partner


def soups(layout: str, kind: str, actions: str, seed: int, horizon: int) -> int:
    """Soups one ``kind``+``kind`` team delivers in one episode."""
    env = lang_pz.make(f"overcooked/{layout}-v0", actions=actions, horizon=horizon)
    team = {a: overcooked_partner(kind, env, a, seed=1000 * seed + i) for i, a in enumerate(env.possible_agents)}
    obs, infos = env.reset(seed=seed)
    while env.agents:
        obs, _, _, _, infos = env.step({a: team[a](obs[a], infos[a]) for a in env.agents})
    return int(env.unwrapped.soups_delivered)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=400)
    parser.add_argument("--actions", nargs="+", default=["primitive", "macro"], choices=["primitive", "macro"])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    columns = [(kind, level) for level in args.actions for kind in ("greedy", "random")]
    print(f"mean soups delivered (min-max) over {args.seeds} seeds x {args.horizon} ticks")
    print(f"{'layout':24s}" + "".join(f"{k + '+' + k + ' ' + lvl:>24s}" for k, lvl in columns))
    t0 = time.perf_counter()
    for layout in LAYOUTS:
        cells = []
        for kind, level in columns:
            n = [soups(layout, kind, level, s, args.horizon) for s in range(args.seeds)]
            cells.append(f"{np.mean(n):.1f} ({min(n)}-{max(n)})")
        print(f"{layout:24s}" + "".join(f"{c:>24s}" for c in cells), flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
