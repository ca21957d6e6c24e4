"""Items shared between a run's phases, before and after held-out splits (the issue "Results a
researcher can trust").

Seeds as a run uses them: training 0..99, validation 1000..1019, test 2000..2019.

- *before*: one ``env_kwargs`` (the env's defaults) for every phase, and the seed-to-item rule
  the task envs had until this change: ``items[numpy.random.default_rng(seed).integers(n)]``,
  drawn with replacement from the default split (HotpotQA dev, MATH-500 / GSM8K / HumanEval
  all, MBPP test); Overcooked from its one fixed start state.
- *after*: each phase's kwargs from :func:`lang_pz.training.phases.phase_env_kwargs` with
  :func:`~lang_pz.training.phases.default_phase_kwargs` (``split=<phase>``), items read by
  :func:`~lang_pz.training.phases.items_played` from the envs themselves.

Then the Overcooked first observations of seeds 0, 1, 1000, 2000 (before: one fixed start;
after: ``split`` per phase), and whether a greedy team's validation episode (seed 1000) replays
its training episode (seed 0) decision for decision.

    python benchmarks/split_overlap.py [--data-dir DIR] [--out benchmarks/results/split_overlap.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one

import lang_pz
from lang_pz.envs.overcooked.macro_actions import AGENTS
from lang_pz.policies import OvercookedGreedyPolicy
from lang_pz.training.phases import PHASES, default_phase_kwargs, items_played, phase_env_kwargs

SEEDS = {"train": range(100), "validation": range(1000, 1020), "test": range(2000, 2020)}
TASKS = ["tasks/hotpotqa-v0", "tasks/math500-v0", "tasks/gsm8k-v0", "tasks/humaneval-v0", "tasks/mbpp-v0"]
LAYOUTS = ["overcooked/cramped_room-v0", "overcooked/forced_coordination-v0"]


def before(env_id: str) -> tuple[list[int], dict[str, list[str]]]:
    """Pool sizes and items per phase under the old rule (one split, drawn with replacement)."""
    env = lang_pz.make(env_id)
    if env_id.startswith("overcooked/"):
        env.reset(seed=0)
        return [1, 1, 1], {p: [env.unwrapped.item_id for _ in seeds] for p, seeds in SEEDS.items()}
    n = len(env.items)
    played: dict[str, list[str]] = {}
    for phase, seeds in SEEDS.items():
        played[phase] = []
        for seed in seeds:
            env.reset(options={"index": int(np.random.default_rng(seed).integers(n))})
            played[phase].append(env.item_id)
    return [n, n, n], played


def after(env_id: str) -> tuple[list[int], dict[str, list[str]]]:
    """Pool sizes and items per phase with each phase's own split."""
    defaults = default_phase_kwargs(env_id)
    kwargs = {p: phase_env_kwargs({}, {}, p, defaults=defaults) for p in PHASES}
    sizes = []
    for p in PHASES:
        raw = lang_pz.make(env_id, **kwargs[p]).unwrapped
        sizes.append(len(raw.items) if hasattr(raw, "items") else len(raw._starts[0]))
    return sizes, {p: items_played(env_id, kwargs[p], list(SEEDS[p])) for p in PHASES}


def row(env_id: str, label: str, sizes: list[int], played: dict[str, list[str]]) -> str:
    sets = {p: set(played[p]) for p in PHASES}
    tv, tt, vt = (
        len(sets["train"] & sets["validation"]),
        len(sets["train"] & sets["test"]),
        len(sets["validation"] & sets["test"]),
    )
    distinct = " / ".join(str(len(sets[p])) for p in PHASES)
    pool = " / ".join(str(n) for n in sizes)
    return f"| {env_id} | {label} | {pool} | {distinct} | {tv} | {tt} | {vt} |"


def greedy_actions(split: str | None, seed: int) -> list[tuple[str, ...]]:
    env = lang_pz.make("overcooked/cramped_room-v0", horizon=100, split=split)
    obs, infos = env.reset(seed=seed)
    team = {a: OvercookedGreedyPolicy(env, a, seed=i) for i, a in enumerate(env.possible_agents)}
    out = []
    while env.agents:
        step = {a: team[a](obs[a], infos[a]) for a in env.agents}
        out.append(tuple(step.values()))
        obs, _, _, _, infos = env.step(step)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("LANG_PZ_DATA_DIR"))
    parser.add_argument("--out", default="benchmarks/results/split_overlap.md")
    args = parser.parse_args()
    if args.data_dir:
        os.environ["LANG_PZ_DATA_DIR"] = str(Path(args.data_dir).resolve())
    warnings.simplefilter("ignore")
    lines = [
        "# Items shared between phases, before and after held-out splits",
        "",
        "Seeds: training 0..99, validation 1000..1019, test 2000..2019 (`python benchmarks/split_overlap.py`).",
        "*Before*: one env_kwargs (the defaults) for every phase, items drawn with replacement "
        "(`default_rng(seed).integers(n)`). *After*: `split=<phase>` per phase "
        "(`lang_pz.training.phases.default_phase_kwargs`), seed s plays position s % n of a fixed permutation. "
        "Overcooked's item is the start state (both players' cells and facings).",
        "",
        "| env | | items in train / val / test pool | distinct items played (train / val / test) "
        "| train & val | train & test | val & test |",
        "|---|---|---|---|---|---|---|",
    ]
    for env_id in TASKS + LAYOUTS:
        lines.append(row(env_id, "before", *before(env_id)))
        lines.append(row(env_id, "after", *after(env_id)))
        print(lines[-2], lines[-1], sep="\n", flush=True)
    lines += ["", "Overcooked cramped_room, the first observation (player_0's text) of seeds 0, 1, 1000, 2000:", ""]
    lines += ["| kwargs | distinct first observations of 4 seeds | seed 0 start | seed 1000 start |", "|---|---|---|---|"]
    for label, split_of in (("before: split=None", lambda s: None), ("after: split per phase", _phase_of)):
        firsts, starts = [], {}
        for seed in (0, 1, 1000, 2000):
            env = lang_pz.make("overcooked/cramped_room-v0", horizon=5, split=split_of(seed))
            obs, _ = env.reset(seed=seed)
            firsts.append(tuple(obs[a]["text"] for a in AGENTS))
            starts[seed] = env.unwrapped.item_id.split(": ", 1)[1]
        lines.append(f"| {label} | {len(set(firsts))} | {starts[0]} | {starts[1000]} |")
    same_before = greedy_actions(None, 0) == greedy_actions(None, 1000)
    same_after = greedy_actions("train", 0) == greedy_actions("validation", 1000)
    lines += [
        "",
        "Greedy team (overcooked_ai's GreedyHumanModel, primitive actions, 100 ticks): validation seed 1000 "
        f"replays training seed 0 decision for decision: before {'yes' if same_before else 'no'}, "
        f"after {'yes' if same_after else 'no'}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")


def _phase_of(seed: int) -> str:
    return "train" if seed < 1000 else "validation" if seed < 2000 else "test"


if __name__ == "__main__":
    main()
