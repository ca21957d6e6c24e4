"""Wrapper overhead: steps per second of each language env against its raw env, same actions.

For every registered game environment, in every API it supports (task envs, ``tasks/*``, are
natively textual and have no raw env: they are skipped, and the table says so):

1. Untimed: play seeded episodes of the language env, choosing uniformly among
   ``info["legal_actions"]``, and record each action word and the raw action it decoded to
   (``info["action"]``). This script is the fixed work of both sides.
2. Untimed: replay the raw actions on the raw env (the PettingZoo / Gymnasium env the
   language env is built on, made with the same arguments) and check it gets the same
   rewards, so both sides really play the same episodes.
3. Timed, in interleaved rounds (raw then language, language then raw, ...): each side plays
   the whole script with the usual loop (parallel: ``reset`` / ``step(actions)``; AEC:
   ``agent_iter`` / ``last()`` / ``step``; Gymnasium: ``reset`` / ``step``). The language
   side sends the words, the raw side the decoded actions. Time is the process's CPU time
   (``time.process_time``), so other programs on a shared machine do not count.

It prints, per row, the median steps/s of each side and the median and range of the
per-round ratios language / raw (1.0 = no overhead; above 1 = the language env is faster,
e.g. because it skips image observations nobody reads).

    python benchmarks/bench_wrappers.py [--rounds 5] [--scale 1.0] [--ids classic/tictactoe-v0 ...]
"""

from __future__ import annotations

import argparse
import gc
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

#: (id, kwargs, agent steps of work at --scale 1). Every registered game id appears at least once.
CONFIGS: list[tuple[str, dict[str, Any], int]] = [
    ("butterfly/pistonball-v0", {"n_pistons": 20}, 250),
    ("butterfly/pistonball-v0", {"n_pistons": 5, "hold": 5}, 250),
    ("classic/tictactoe-v0", {}, 3000),
    ("classic/connect_four-v0", {}, 3000),
    ("classic/rps-v0", {}, 3000),
    ("classic_control/cartpole-v0", {}, 3000),
    ("toy_text/frozen_lake-v0", {}, 3000),
    ("overcooked/cramped_room-v0", {}, 1500),
    ("overcooked/cramped_room-v0", {"actions": "macro"}, 300),
    ("overcooked/asymmetric_advantages-v0", {}, 1500),
    ("overcooked/coordination_ring-v0", {}, 1500),
    ("overcooked/forced_coordination-v0", {}, 1500),
    ("overcooked/counter_circuit-v0", {}, 1500),
]


# -- raw environments: what each language env wraps, made with the same arguments ----------


def _raw_pistonball(
    api: str,
    n_pistons: int = 20,
    continuous: bool = False,
    hold: int = 1,
    max_cycles: int = 125,
    time_penalty: float = -0.1,
    random_drop: bool = True,
    random_rotate: bool = True,
) -> Any:
    from pettingzoo.butterfly import pistonball_v6
    from pettingzoo.utils.conversions import parallel_to_aec
    from supersuit import frame_skip_v0

    env = pistonball_v6.parallel_env(
        n_pistons=n_pistons,
        continuous=continuous,
        max_cycles=max_cycles,
        time_penalty=time_penalty,
        random_drop=random_drop,
        random_rotate=random_rotate,
    )
    if hold > 1:
        env = frame_skip_v0(env, hold)
    return parallel_to_aec(env) if api == "aec" else env


def _raw_classic(name: str) -> Callable[..., Any]:
    def make(api: str, **kwargs: Any) -> Any:
        import importlib

        module = importlib.import_module(f"pettingzoo.classic.{name}")
        return module.env(**kwargs) if api == "aec" else module.parallel_env(**kwargs)

    return make


def _raw_rps(api: str, num_actions: int = 3, max_cycles: int = 15) -> Any:
    return _raw_classic("rps_v2")(api, num_actions=num_actions, max_cycles=max_cycles)


def _raw_gym(gym_id: str, **fixed: Any) -> Callable[..., Any]:
    def make(api: str, **kwargs: Any) -> Any:
        import gymnasium as gym

        return gym.make(gym_id, **{**fixed, **kwargs})

    return make


def _raw_overcooked(layout: str) -> Callable[..., Any]:
    def make(api: str, horizon: int = 400, actions: str = "primitive", shaping_factor: float = 0.0) -> Any:
        from pettingzoo.utils.conversions import parallel_to_aec

        from lang_pz.envs.overcooked import OvercookedParallelEnv

        env = OvercookedParallelEnv(layout, horizon=horizon, actions=actions, shaping_factor=shaping_factor)
        return parallel_to_aec(env) if api == "aec" else env

    return make


RAW: dict[str, Callable[..., Any]] = {
    "butterfly/pistonball-v0": _raw_pistonball,
    "classic/tictactoe-v0": _raw_classic("tictactoe_v3"),
    "classic/connect_four-v0": _raw_classic("connect_four_v3"),
    "classic/rps-v0": _raw_rps,
    "classic_control/cartpole-v0": _raw_gym("CartPole-v1"),
    "toy_text/frozen_lake-v0": _raw_gym("FrozenLake-v1", map_name="4x4", is_slippery=True),
    **{
        f"overcooked/{layout}-v0": _raw_overcooked(layout)
        for layout in (
            "cramped_room",
            "asymmetric_advantages",
            "coordination_ring",
            "forced_coordination",
            "counter_circuit",
        )
    },
}


# -- the script: seeded episodes recorded on the language env ------------------------------


def _to_raw(space: Any, decoded: Any) -> Any:
    """The raw env's action from the JSON-able ``info["action"]``."""
    if decoded is None:
        return None
    if isinstance(decoded, list):
        return np.asarray(decoded, dtype=space.dtype)
    return int(decoded)


def _choose(rng: np.random.Generator, info: dict[str, Any]) -> str:
    legal = info.get("legal_actions")
    if legal:
        return legal[int(rng.integers(len(legal)))]
    lo, hi = info["action_range"]
    return f"{rng.uniform(lo, hi):.3f}"


def record(env: Any, api: str, steps: int) -> tuple[list[tuple[int, list[Any], list[Any]]], float]:
    """Episodes (seed, language actions, raw actions) totalling at least ``steps`` agent steps,
    and the language env's total reward over them."""
    script, total, seed, reward = [], 0, 0, 0.0
    while total < steps:
        rng = np.random.default_rng(seed)
        words, raws = [], []
        if api == "parallel":
            _, infos = env.reset(seed=seed)
            while env.agents:
                acts = {a: _choose(rng, infos[a]) for a in env.agents}
                _, rewards, _, _, infos = env.step(acts)
                reward += sum(rewards.values())
                words.append(acts)
                raws.append({a: _to_raw(env.env.action_space(a), infos[a]["action"]) for a in acts})
                total += len(acts)
        elif api == "aec":
            env.reset(seed=seed)
            for agent in env.agent_iter():
                _, r, term, trunc, info = env.last()
                reward += r
                if term or trunc:
                    words.append(None)
                    raws.append(None)
                    env.step(None)
                else:
                    word = _choose(rng, info)
                    decoded = env.adapter.parse(
                        env.env, agent, word, env.raw_observation(agent), env.env.infos.get(agent, {})
                    )
                    env.step(word)
                    words.append(word)
                    raws.append(_to_raw(env.env.action_space(agent), decoded))
                total += 1
        else:
            _, info = env.reset(seed=seed)
            done = False
            while not done:
                word = _choose(rng, info)
                _, r, term, trunc, info = env.step(word)
                reward += float(r)
                words.append(word)
                raws.append(_to_raw(env.env.action_space, info["action"]))
                done = term or trunc
                total += 1
        script.append((seed, words, raws))
        seed += 1
    return script, reward


def play(env: Any, api: str, script: list[tuple[int, list[Any], list[Any]]], language: bool) -> float:
    """Play ``script`` on ``env`` (words if ``language`` else raw actions); the total reward."""
    reward = 0.0
    k = 1 if language else 2
    for entry in script:
        seed, actions = entry[0], entry[k]
        if api == "parallel":
            env.reset(seed=seed)
            for acts in actions:
                reward += sum(env.step(acts)[1].values())
        elif api == "aec":
            env.reset(seed=seed)
            it = iter(actions)
            for _ in env.agent_iter():
                reward += env.last()[1]
                env.step(next(it))
        else:
            env.reset(seed=seed)
            for a in actions:
                reward += float(env.step(a)[1])
    return reward


def _timed(env: Any, api: str, script: list[Any], language: bool) -> float:
    gc.collect()
    t0 = time.process_time()
    play(env, api, script, language)
    return time.process_time() - t0


def bench(env_id: str, api: str, kwargs: dict[str, Any], steps: int, rounds: int) -> dict[str, Any]:
    lang = lang_pz.make(env_id, api=api, **kwargs)
    raw = RAW[env_id](api, **kwargs)
    script, lang_reward = record(lang, api, steps)
    raw_reward = play(raw, api, script, language=False)
    if not np.isclose(raw_reward, lang_reward, rtol=1e-6, atol=1e-6):
        raise RuntimeError(
            f"{env_id} [{api}] {kwargs}: the raw env scored {raw_reward} and the language env "
            f"{lang_reward} on the same actions; the two sides do not play the same episodes"
        )
    n = sum(len(w) if api != "parallel" else sum(len(x) for x in w) for _, w, _ in script)
    raw_t, lang_t = [], []
    for r in range(rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        for language in order:
            (lang_t if language else raw_t).append(_timed(lang if language else raw, api, script, language))
    ratios = [rt / lt for rt, lt in zip(raw_t, lang_t)]
    return {
        "steps": n,
        "raw": n / statistics.median(raw_t),
        "lang": n / statistics.median(lang_t),
        "ratio": statistics.median(ratios),
        "lo": min(ratios),
        "hi": max(ratios),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds per row")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the work (agent steps) per row")
    parser.add_argument("--ids", nargs="+", default=None, help="only these env ids")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(
        f"{'environment':38s} {'api':8s} {'kwargs':28s} {'steps':>6s} {'raw steps/s':>11s} "
        f"{'lang steps/s':>12s} {'ratio':>6s} {'range':>11s}"
    )
    covered = set()
    for env_id, kwargs, steps in CONFIGS:
        if args.ids and env_id not in args.ids:
            continue
        spec = lang_pz.registry[env_id]
        for api in spec.apis:
            try:
                row = bench(env_id, api, kwargs, max(1, int(steps * args.scale)), args.rounds)
            except lang_pz.error.DependencyNotInstalled as exc:
                print(f"{env_id:38s} {api:8s} skipped: {exc}")
                continue
            covered.add(env_id)
            kw = ",".join(f"{k}={v}" for k, v in kwargs.items()) or "-"
            print(
                f"{env_id:38s} {api:8s} {kw:28s} {row['steps']:6d} {row['raw']:11.0f} {row['lang']:12.0f} "
                f"{row['ratio']:6.2f} {row['lo']:5.2f}-{row['hi']:<5.2f}",
                flush=True,
            )
    tasks = sorted(i for i in lang_pz.registry if i.startswith("tasks/"))
    print(f"skipped (no raw env: natively textual): {', '.join(tasks)}")
    missing = sorted(set(lang_pz.registry) - covered - set(tasks))
    if missing and not args.ids:
        print(f"not benchmarked: {', '.join(missing)}")
    print(f"({args.rounds} interleaved rounds; CPU time; ratio = median over rounds of lang steps/s / raw steps/s)")


if __name__ == "__main__":
    main()
