"""Tutorial: Stable-Baselines3 PPO on a lang_pz language env, then the trained model as a lang_pz
policy next to scripted ones.

SB3 trains on numpy observations and Discrete actions. ``lang_pz.interop.to_vector_env`` encodes the
observation text (hashed bag of words, 256 numbers) and maps indices to the action words;
``sb3_vec_env`` makes every piston one sub-env of an SB3 VecEnv (SuperSuit), so one network is
shared by all pistons.

    pip install 'lang_pz[sb3]'
    python examples/interop_sb3.py --steps 400         # well under a minute on 2 cores
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

import lang_pz
from lang_pz.interop import HashedBagOfWords, sb3_vec_env, to_vector_env
from lang_pz.policies.base import Decision, Policy, legal_actions, observation_text
from lang_pz.rollout import rollout

ENV = ("butterfly/pistonball-v0", {"n_pistons": 5, "hold": 5, "max_cycles": 125})


class TextPPOPolicy(Policy):
    """The SB3 model reading the same text an LLM reads (encoded as in training)."""

    def __init__(self, model: Any, encoder: HashedBagOfWords) -> None:
        self.model, self.encoder = model, encoder

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        t0 = time.perf_counter()
        index, _ = self.model.predict(self.encoder(observation_text(observation)), deterministic=True)
        word = legal_actions(info)[int(index)]  # Pistonball: down, stay, up in index order
        return Decision(word, str(int(index)), latency_s=time.perf_counter() - t0)


def main(steps: int = 400, seed: int = 0) -> dict[str, float]:
    from stable_baselines3 import PPO

    from lang_pz.policies import PistonballHeuristic

    env_id, kwargs = ENV
    encoder = HashedBagOfWords()
    venv = sb3_vec_env(to_vector_env(lang_pz.make(env_id, **kwargs), encoder))
    model = PPO("MlpPolicy", venv, n_steps=40, batch_size=100, n_epochs=2, seed=seed, device="cpu")
    model.learn(steps)

    env = lang_pz.make(env_id, **kwargs)
    team = {a: TextPPOPolicy(model, encoder) for a in env.possible_agents}
    team["piston_4"] = PistonballHeuristic()  # a mixed team: learned pistons and a scripted one
    returns = {f"seed {s}": rollout(env, team, seed=s).team_return for s in (100, 101)}
    return returns


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    print(main(ap.parse_args().steps))
