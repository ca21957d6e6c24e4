"""LLM decisions per second on the embedded model, against the raw environment step rate.

Plays 5-piston Pistonball (hold 5) with LLMPolicy agents on the embedded backend, with the
response cache off so every decision is a real model call, and prints decisions/s, mean
latency and tokens per decision, next to the language env's own step rate with scripted
agents measured in the same run (the ratio says how much of a rollout the LLM costs).

    python benchmarks/bench_llm.py [--episodes 1]
"""

from __future__ import annotations

import argparse
import time
import warnings

import lang_pz
from lang_pz.backends import LlamaCppBackend
from lang_pz.policies.llm import LLMPolicy
from lang_pz.policies.scripted import PistonballHeuristic
from lang_pz.rollout import rollout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5)

    t0 = time.perf_counter()
    n = sum(
        len(rollout(env, {a: PistonballHeuristic() for a in env.possible_agents}, seed=s).steps)
        for s in range(args.episodes)
    )
    scripted_rate = n / (time.perf_counter() - t0)

    t_load = time.perf_counter()
    llm = LlamaCppBackend(cache=None)
    load_s = time.perf_counter() - t_load
    team = {a: LLMPolicy("Always push up.", llm) for a in env.possible_agents}
    t0 = time.perf_counter()
    steps = [s for k in range(args.episodes) for s in rollout(env, team, seed=k).steps]
    wall = time.perf_counter() - t0
    rate = len(steps) / wall
    print(f"model load: {load_s:.2f} s")
    print(f"scripted agents: {scripted_rate:.1f} decisions/s (env + text only)")
    print(
        f"embedded LLM agents: {rate:.2f} decisions/s over {len(steps)} decisions "
        f"(mean latency {sum(s.latency_s for s in steps) / len(steps):.3f} s, "
        f"{sum(s.prompt_tokens for s in steps) / len(steps):.0f} prompt + "
        f"{sum(s.completion_tokens for s in steps) / len(steps):.1f} completion tokens per decision)"
    )
    print(f"ratio LLM/scripted: {rate / scripted_rate:.4f}")


if __name__ == "__main__":
    main()
