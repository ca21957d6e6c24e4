"""Overcooked overhead: game ticks per second of the language env against the raw env, in one run.

For each layout, plays uniformly random actions for ``--seconds`` on

* ``raw``: overcooked_ai's own ``OvercookedEnv`` (primitive actions, no text);
* ``core``: lang_pz's numeric ``OvercookedParallelEnv`` (index actions, no text), at both
  action levels: what the PettingZoo interface and, for skills, the planner cost;
* ``lang``: the language env from ``lang_pz.make`` (text actions in, text observations out),
  at both action levels,

and prints ticks/s of each, the ratios lang/raw and lang/core, and decisions/s (one decision
is one ``step``: a tick at the primitive level, a whole skill step at the skill level).

    python benchmarks/bench_overcooked.py [--seconds 1.5] [--layouts cramped_room ...]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one

import lang_pz
from lang_pz.envs.overcooked import LAYOUTS, OvercookedParallelEnv
from lang_pz.envs.overcooked.core import import_overcooked
from lang_pz.envs.overcooked.macro_actions import PRIMITIVES, SKILL_WORDS
from lang_pz.envs.overcooked.planners import load_planners


def _timed(seconds: float, episode: Callable[[float], tuple[int, int]]) -> tuple[float, float]:
    """``(ticks/s, decisions/s)`` of repeated ``episode(deadline) -> (ticks, decisions)``."""
    ticks = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        t, d = episode(t0 + seconds)
        ticks, decisions = ticks + t, decisions + d
    elapsed = time.perf_counter() - t0
    return ticks / elapsed, decisions / elapsed


def raw(layout: str, seconds: float) -> tuple[float, float]:
    oc_env = import_overcooked()
    from overcooked_ai_py.mdp.actions import Action
    from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld

    mdp = OvercookedGridworld.from_layout_name(LAYOUTS[layout])
    env = oc_env.OvercookedEnv.from_mdp(mdp, horizon=400, info_level=0)
    env._mp = load_planners(mdp).mlam.motion_planner  # else it pickles one into site-packages
    rng = np.random.default_rng(0)

    def episode(deadline: float) -> tuple[int, int]:
        env.reset(regen_mdp=False)
        n = 0
        while not env.is_done() and time.perf_counter() < deadline:
            env.step((Action.ALL_ACTIONS[rng.integers(6)], Action.ALL_ACTIONS[rng.integers(6)]))
            n += 1
        return n, n

    return _timed(seconds, episode)


def core(layout: str, level: str, seconds: float) -> tuple[float, float]:
    env = OvercookedParallelEnv(layout, horizon=400, actions=level)
    rng = np.random.default_rng(0)

    def episode(deadline: float) -> tuple[int, int]:
        env.reset(seed=0)
        d = 0
        while env.agents and time.perf_counter() < deadline:
            if level == "primitive":
                acts = {a: int(rng.integers(len(PRIMITIVES))) for a in env.agents}
            else:
                acts = {a: int(rng.choice(np.flatnonzero(env.skill_mask(a)))) for a in env.agents}
            env.step(acts)
            d += 1
        return int(env.game_state.timestep), d

    return _timed(seconds, episode)


def language(layout: str, level: str, seconds: float) -> tuple[float, float]:
    env = lang_pz.make(f"overcooked/{layout}-v0", actions=level)
    rng = np.random.default_rng(0)

    def episode(deadline: float) -> tuple[int, int]:
        obs, infos = env.reset(seed=0)
        d = 0
        while env.agents and time.perf_counter() < deadline:
            acts = {a: infos[a]["legal_actions"][int(rng.integers(len(infos[a]["legal_actions"])))] for a in env.agents}
            obs, _, _, _, infos = env.step(acts)
            assert all(len(o["text"]) > 0 for o in obs.values())
            d += 1
        return int(env.unwrapped.game_state.timestep), d

    return _timed(seconds, episode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(
        f"{'layout':22s} {'level':9s} {'raw ticks/s':>11s} {'core ticks/s':>12s} {'lang ticks/s':>12s} "
        f"{'lang/raw':>8s} {'lang/core':>9s} {'lang decisions/s':>16s}"
    )
    for layout in args.layouts:
        r, _ = raw(layout, args.seconds)
        for level in ("primitive", "macro"):
            c, _ = core(layout, level, args.seconds)
            lt, ld = language(layout, level, args.seconds)
            print(
                f"{layout:22s} {level:9s} {r:11.0f} {c:12.0f} {lt:12.0f} {lt / r:8.3f} {lt / c:9.2f} {ld:16.0f}", flush=True
            )
    print(f"(SKILL_WORDS: {len(SKILL_WORDS)}; random legal actions; horizon 400)")


if __name__ == "__main__":
    main()
