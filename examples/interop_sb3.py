"""Tutorial: Stable-Baselines3 PPO on a lang_pz language env, then the trained model as a lang_pz
policy next to scripted ones.

SB3 trains on numpy observations and Discrete actions. ``lang_pz.interop.to_vector_env`` encodes the
observation text (hashed bag of words, 256 numbers) and maps indices to the action words;
``sb3_vec_env`` makes every piston one sub-env of an SB3 VecEnv (SuperSuit), so one network is
shared by all pistons. ``benchmarks/train_sb3_pistonball.py`` is the full-length version (80,000
steps: 491 mean team return on held-out seeds, random 243).

    pip install 'lang_pz[sb3]'
    python examples/interop_sb3.py --steps 400         # well under a minute on 2 cores
"""

from __future__ import annotations

import argparse

import lang_pz
from lang_pz.interop import HashedBagOfWords, sb3_vec_env, to_vector_env
from lang_pz.policies.learned import SB3Policy
from lang_pz.rollout import rollout

ENV = ("butterfly/pistonball-v0", {"n_pistons": 5, "hold": 5, "max_cycles": 125})


def main(steps: int = 400, seed: int = 0) -> dict[str, float]:
    from stable_baselines3 import PPO

    from lang_pz.policies import PistonballHeuristic

    env_id, kwargs = ENV
    encoder = HashedBagOfWords()
    venv = sb3_vec_env(to_vector_env(lang_pz.make(env_id, **kwargs), encoder))
    model = PPO("MlpPolicy", venv, n_steps=40, batch_size=100, n_epochs=2, seed=seed, device="cpu")
    model.learn(steps)

    env = lang_pz.make(env_id, **kwargs)
    # the model reads the same text an LLM reads, encoded as in training
    team = {a: SB3Policy(model, encoder, observation="text") for a in env.possible_agents}
    team["piston_4"] = PistonballHeuristic()  # a mixed team: learned pistons and a scripted one
    return {f"seed {s}": rollout(env, team, seed=s).team_return for s in (100, 101)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    print(main(ap.parse_args().steps))
