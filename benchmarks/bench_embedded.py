"""Concurrent episodes on the embedded model: one llama.cpp instance or a pool of two?

The embedded backend serves one request at a time per model instance (``max_concurrency = 1``).
With 2 cores there are two ways to play two episodes at once: one instance (2 threads) behind
its lock, or two instances (1 thread each) side by side. This plays the same episodes (5-piston
Pistonball, hold 5, seeds 0..E-1, LLM agents, response cache off so every decision is a model
call, greedy decoding) three ways, in interleaved rounds, and prints wall time and decisions/s
of each against the first, plus the resident memory the second instance costs:

1. ``serial``: one instance (``n_threads=2``), one episode after another;
2. ``one instance, 2 at once``: the same instance, two episodes in two threads (its lock
   serialises the requests);
3. ``pool of 2``: two instances (``n_threads=1`` each), one per thread.

Every way plays the same decisions (checked: the same actions per episode), so the ratios
compare the same work. Wall-clock times: other programs on the machine count, so run it on an
idle machine and read the ratios of one run, not the absolute rates.

    python benchmarks/bench_embedded.py [--episodes 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import lang_pz
from lang_pz.backends import LlamaCppBackend
from lang_pz.policies.llm import LLMPolicy
from lang_pz.rollout import rollout


def play(backend: LlamaCppBackend, seed: int) -> list[str]:
    """One episode with every piston an LLM agent on ``backend``: the actions played."""
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5)
    team = {a: LLMPolicy("If the ball is to your right, go down; otherwise go up.", backend) for a in env.possible_agents}
    return [s.raw_output or "" for s in rollout(env, team, seed=seed).steps]


def timed(fn) -> tuple[float, list[list[str]]]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4, help="episodes per way (even)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    seeds = list(range(args.episodes))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    one = LlamaCppBackend(cache=None, n_threads=2)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    pool = [LlamaCppBackend(cache=None, n_threads=1), LlamaCppBackend(cache=None, n_threads=1)]
    rss3 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def serial():
        return [play(one, s) for s in seeds]

    def shared():
        with ThreadPoolExecutor(2) as ex:
            return list(ex.map(lambda s: play(one, s), seeds))

    def pooled():
        with ThreadPoolExecutor(2) as ex:
            return list(ex.map(lambda i: play(pool[i % 2], seeds[i]), range(len(seeds))))

    ways = {"serial (1 instance, 2 threads)": serial, "one instance, 2 at once": shared, "pool of 2 (1 thread each)": pooled}
    times: dict[str, list[float]] = {k: [] for k in ways}
    reference = None
    for r in range(args.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            seconds, actions = timed(ways[name])
            if reference is None:
                reference = actions
            elif actions != reference:
                raise SystemExit(f"{name} played different actions: the ways do not compare the same work")
            times[name].append(seconds)
    decisions = sum(len(a) for a in reference or [])
    base = statistics.median(times["serial (1 instance, 2 threads)"])
    print(f"{len(seeds)} episodes, {decisions} decisions per way, {args.rounds} interleaved rounds")
    print("| way | median wall s | decisions/s | wall vs serial |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"| {name} | {m:.1f} | {decisions / m:.2f} | {m / base:.2f}x |")
    print(
        f"resident memory: first instance +{(rss1 - rss0) / 1024:.0f} MB, "
        f"two more instances +{(rss3 - rss1) / 1024:.0f} MB (ru_maxrss)"
    )


if __name__ == "__main__":
    main()
