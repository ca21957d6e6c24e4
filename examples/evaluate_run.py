"""Evaluate a finished training run: its starting and final policies on held-out seeds.

Reads the run folder (config and policies), plays both teams on the same seeds (none of them
training or validation seeds) and prints the mean objective with a 95 % bootstrap interval::

    python examples/evaluate_run.py runs/<time> --seeds 2000 2001 2002 2003
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import bootstrap

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.objectives import default_objective, make_objective
from lang_pz.runs import RunFolder, read_policies
from lang_pz.training import TrainConfig, evaluate, make_actors


def interval(values: list[float]) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the mean (one value: that value)."""
    if len(set(values)) < 2:
        return values[0], values[0]
    res = bootstrap((np.asarray(values),), np.mean, confidence_level=0.95, method="percentile", random_state=0)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def main(run_dir: str, seeds: list[int], backend=None) -> dict[str, list[float]]:
    run = RunFolder(run_dir)
    cfg = TrainConfig(**run.load_config())
    used = set(cfg.validation_seeds) | set(range(cfg.seed, cfg.seed + cfg.iterations * cfg.episodes_per_iteration))
    held_out = sorted(set(seeds) & used)
    if held_out:
        raise SystemExit(f"seeds {held_out} were used for training or validation; choose held-out seeds")
    env = lang_pz.make(cfg.env_id, **cfg.env_kwargs)
    objective = make_objective(cfg.objective or default_objective(cfg.env_id), env.possible_agents, cfg.env_id)
    llm = backend or make_backend(cfg.actor_backend)
    out = {}
    for name, folder in (("initial", run.iteration(0).policies), ("final", run.final_policies)):
        values = evaluate(env, make_actors(read_policies(folder), llm), seeds, objective=objective)
        lo, hi = interval(values)
        print(
            f"{name:8s} {objective.spec}: mean {np.mean(values):8.1f}  95% CI [{lo:.1f}, {hi:.1f}]  over {len(seeds)} seeds"
        )
        out[name] = values
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--seeds", type=int, nargs="+", default=[20000, 20001, 20002, 20003])
    args = parser.parse_args()
    main(args.run_dir, args.seeds)
