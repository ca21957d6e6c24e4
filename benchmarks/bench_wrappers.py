"""Wrapper overhead: steps per second of each language env against its raw env, in one run.

For every registered PettingZoo environment (parallel API where it has one, else AEC), plays
random episodes on the raw environment and on the language environment with the same
random actions written as text, and prints steps/s of both and their ratio (the figure).

    python benchmarks/bench_wrappers.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

import lang_pz


def _inner(env: Any) -> Any:
    return env.env


def _steps_per_second(env: Any, seconds: float, language: bool) -> float:
    rng = np.random.default_rng(0)
    adapter = env.adapter
    target = env if language else _inner(env)
    steps, t0, seed = 0, time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        if isinstance(target, ParallelEnv):
            target.reset(seed=seed)
            while target.agents and time.perf_counter() - t0 < seconds:
                acts = {}
                for a in target.agents:
                    raw = _inner(env).action_space(a).sample()
                    acts[a] = adapter.action_text(_inner(env), a, raw) if language else raw
                target.step(acts)
                steps += 1
        else:
            target.reset(seed=seed)
            for a in target.agent_iter():
                obs, _, term, trunc, info = target.last()
                if term or trunc:
                    target.step(None)
                else:
                    legal = info.get("legal_actions") if language else None
                    if language:
                        act = legal[rng.integers(len(legal))] if legal else "0"
                    else:
                        mask = obs.get("action_mask") if isinstance(obs, dict) else None
                        act = target.action_space(a).sample(mask)
                    target.step(act)
                steps += 1
                if time.perf_counter() - t0 >= seconds:
                    break
        seed += 1
    return steps / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'environment':36s} {'api':8s} {'raw steps/s':>12s} {'lang steps/s':>13s} {'ratio':>6s}")
    for env_id, spec in sorted(lang_pz.registry.items()):
        api = "parallel" if "parallel" in spec.apis else spec.apis[0]
        if api == "gymnasium":
            continue
        kwargs = {"n_pistons": 20} if "pistonball" in env_id else {}
        env = lang_pz.make(env_id, api=api, **kwargs)
        raw = _steps_per_second(env, args.seconds, language=False)
        lang = _steps_per_second(env, args.seconds, language=True)
        print(f"{env_id:36s} {api:8s} {raw:12.1f} {lang:13.1f} {lang / raw:6.2f}")


if __name__ == "__main__":
    main()
